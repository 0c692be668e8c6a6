/* The minimal program `cargo xtask bench` measures projectfile against: the bare durable I/O of
 * putting a marked block into a file and taking it out again, one process per command, so process
 * start counts on both sides.
 *
 *   minimal [-l LOCKFILE] add FILE TEXT   read FILE (missing: empty), drop an earlier block, write
 *                                         a temporary file beside it with the block appended, fsync,
 *                                         rename over FILE, fsync the directory
 *   minimal [-l LOCKFILE] remove FILE     the same with the block taken out (nothing to take out:
 *                                         nothing written; exit 3)
 *
 * With -l, an exclusive flock(2) on LOCKFILE is held from before the read to exit: what a
 * careful tool does to keep concurrent rewrites from losing updates. Errors exit 1 with a message.
 * Built by the benchmark with `gcc -O2` into target/; never shipped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char BEGIN[] = "<!-- BEGIN minimal-session-instructions -->\n";
static const char END[] = "<!-- END minimal-session-instructions -->\n";

static void die(const char *what, const char *path) {
    fprintf(stderr, "error: %s: %s: %s\n", path, what, strerror(errno));
    exit(1);
}

/* The whole file, with `extra` spare bytes at the end; a missing file is empty. */
static char *read_all(const char *path, size_t extra, size_t *len, mode_t *mode) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st = {0};
    if (fd < 0 && errno != ENOENT) die("open", path);
    if (fd >= 0 && fstat(fd, &st) != 0) die("fstat", path);
    *mode = fd >= 0 ? (st.st_mode & 07777) : 0644;
    size_t size = fd >= 0 ? (size_t)st.st_size : 0;
    char *buf = malloc(size + extra + 1);
    if (!buf) die("malloc", path);
    size_t got = 0;
    while (fd >= 0 && got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("read", path);
        if (n == 0) break;
        got += (size_t)n;
    }
    if (fd >= 0) close(fd);
    *len = got;
    return buf;
}

/* Removes the block (with the one newline before it) from buf[0..*len]; 1 if there was one. */
static int take_block_out(char *buf, size_t *len) {
    buf[*len] = '\0';
    char *begin = memmem(buf, *len, BEGIN, sizeof BEGIN - 1);
    if (!begin) return 0;
    char *end = memmem(begin, *len - (size_t)(begin - buf), END, sizeof END - 1);
    if (!end) return 0;
    end += sizeof END - 1;
    if (begin > buf && begin[-1] == '\n') begin--;
    size_t tail = *len - (size_t)(end - buf);
    memmove(begin, end, tail);
    *len = (size_t)(begin - buf) + tail;
    return 1;
}

/* temp file beside `path`, write, fsync, rename, fsync the directory. */
static void write_durably(const char *path, const char *buf, size_t len, mode_t mode) {
    char tmp[4096], dir[4096];
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    if (dlen == 0) strcpy(dir, slash ? "/" : ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)dlen, path);
    snprintf(tmp, sizeof tmp, "%s/.%s.minimal-tmp.%d", dir, slash ? slash + 1 : path, getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) die("create the temporary file", tmp);
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("write", tmp);
        done += (size_t)n;
    }
    if (fsync(fd) != 0) die("fsync", tmp);
    close(fd);
    if (rename(tmp, path) != 0) die("rename", tmp);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) die("open the directory", dir);
    if (fsync(dfd) != 0) die("fsync the directory", dir);
    close(dfd);
}

int main(int argc, char **argv) {
    int arg = 1;
    if (argc > 2 && strcmp(argv[1], "-l") == 0) {
        int lock = open(argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (lock < 0) die("open the lock", argv[2]);
        while (flock(lock, LOCK_EX) != 0)
            if (errno != EINTR) die("flock", argv[2]);
        arg = 3; /* held until exit */
    }
    if (argc - arg == 3 && strcmp(argv[arg], "add") == 0) {
        const char *path = argv[arg + 1], *text = argv[arg + 2];
        size_t tlen = strlen(text), len;
        mode_t mode;
        char *buf = read_all(path, 1 + sizeof BEGIN + tlen + 1 + sizeof END, &len, &mode);
        take_block_out(buf, &len);
        buf[len++] = '\n';
        memcpy(buf + len, BEGIN, sizeof BEGIN - 1), len += sizeof BEGIN - 1;
        memcpy(buf + len, text, tlen), len += tlen;
        if (tlen == 0 || text[tlen - 1] != '\n') buf[len++] = '\n';
        memcpy(buf + len, END, sizeof END - 1), len += sizeof END - 1;
        write_durably(path, buf, len, mode);
        return 0;
    }
    if (argc - arg == 2 && strcmp(argv[arg], "remove") == 0) {
        const char *path = argv[arg + 1];
        size_t len;
        mode_t mode;
        char *buf = read_all(path, 0, &len, &mode);
        if (!take_block_out(buf, &len)) return 3;
        write_durably(path, buf, len, mode);
        return 0;
    }
    fprintf(stderr, "usage: minimal [-l LOCKFILE] add FILE TEXT | remove FILE\n");
    return 2;
}
