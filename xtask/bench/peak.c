/* peak OUTFILE CMD [ARGS...]: runs CMD (fork + execvp) with this process's standard streams,
 * waits for it, writes its peak resident set size in KiB (wait4's ru_maxrss) to OUTFILE and
 * exits with its status. `cargo xtask bench` measures peak memory through it because the kernel
 * starts a child's ru_maxrss at the memory of the process whose image exec replaced: spawned
 * from the benchmark itself, every figure would read at least the benchmark's own few MiB; this
 * launcher's is under one. Built by the benchmark with `gcc -O2` into target/; never shipped. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: peak OUTFILE CMD [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("peak: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("peak: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid) {
        perror("peak: wait4");
        return 1;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out || fprintf(out, "%ld\n", usage.ru_maxrss) < 0 || fclose(out) != 0) {
        perror("peak: write the figure");
        return 1;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}
