/* The tracer `cargo xtask layout` runs the release binary under: it runs a program one machine
 * instruction at a time (ptrace single-step, on the real CPU, so the code a start really takes
 * is the code recorded: the C library's string functions for this CPU, the SHA extensions), and
 * writes the address of each instruction whose 16-byte block had not run before, in the order
 * first run, one hexadecimal address per line.
 *
 *   steps OUT PROGRAM [ARGS...]   run PROGRAM (found on PATH) with ARGS, write the addresses to
 *                                 OUT; exit with the program's status (128 + the signal that
 *                                 ended it)
 *
 * The program's standard streams are this process's. Only its first thread is traced. Errors
 * exit 125 with a message. Built by `cargo xtask layout` with the C compiler into target/;
 * never shipped. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* Blocks seen, an open-addressing set of (address / 16 + 1); 0 is empty. */
#define SLOTS (1u << 22)
static uint64_t seen[SLOTS];

/* Whether `block` was new (it is recorded either way). */
static int first_time(uint64_t block) {
    uint64_t key = block + 1, i = (key * 0x9E3779B97F4A7C15ull) >> 42;
    for (;;) {
        i &= SLOTS - 1;
        if (seen[i] == key) return 0;
        if (seen[i] == 0) {
            seen[i] = key;
            return 1;
        }
        i++;
    }
}

static void die(const char *what) {
    fprintf(stderr, "steps: %s: %s\n", what, strerror(errno));
    exit(125);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: steps OUT PROGRAM [ARGS...]\n");
        return 125;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) die(argv[1]);
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) die("ptrace(TRACEME)");
        execvp(argv[2], argv + 2);
        die(argv[2]);
    }
    int status, recorded = 0;
    /* The first stop is the exec's. */
    if (waitpid(pid, &status, 0) != pid) die("waitpid");
    if (!WIFSTOPPED(status)) {
        fprintf(stderr, "steps: %s did not start\n", argv[2]);
        return 125;
    }
    ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
    int deliver = 0;
    for (;;) {
        if (ptrace(PTRACE_SINGLESTEP, pid, 0, deliver) != 0) die("ptrace(SINGLESTEP)");
        if (waitpid(pid, &status, 0) != pid) die("waitpid");
        if (WIFEXITED(status) || WIFSIGNALED(status)) break;
        /* A stop for a signal of the program's own is handed back to it on the next step. */
        deliver = WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP ? WSTOPSIG(status) : 0;
        struct user_regs_struct regs;
        if (ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0) die("ptrace(GETREGS)");
        if (first_time(regs.rip >> 4)) {
            fprintf(out, "%llx\n", (unsigned long long)regs.rip);
            recorded++;
        }
    }
    if (fclose(out) != 0) die(argv[1]);
    if (recorded == 0) {
        fprintf(stderr, "steps: no instruction of %s was recorded\n", argv[2]);
        return 125;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
