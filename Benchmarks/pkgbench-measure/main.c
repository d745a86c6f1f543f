// pkgbench-measure RESULT_FILE COMMAND [ARGS...]
// pkgbench-measure --syncfs DIR
//
// Runs COMMAND and writes what it cost, measured from outside, to RESULT_FILE as one line:
//   status wall_seconds user_seconds system_seconds max_rss_kib write_bytes read_bytes
// A separate small program because Linux carries the parent's peak RSS into a child that
// was created with vfork/posix_spawn from a large process; forking from this small one
// keeps the child's peak RSS its own. write_bytes and read_bytes come from
// /proc/PID/io, read while the child is a zombie (before it is reaped); -1 when unavailable.
//
// --syncfs DIR flushes the one file system holding DIR (its dirty pages and its log), so
// that a loop device's write counters include everything written so far: Swift's Glibc
// module does not declare syncfs, and a global sync would wait for every other disk user.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long io_field(const char *text, const char *name) {
    const char *found = strstr(text, name);
    return found ? atoll(found + strlen(name)) : -1;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--syncfs") == 0) {
        int directory = open(argv[2], O_RDONLY | O_DIRECTORY);
        if (directory < 0 || syncfs(directory) != 0) {
            fprintf(stderr, "pkgbench-measure: syncfs %s: %s\n", argv[2], strerror(errno));
            return 2;
        }
        close(directory);
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: pkgbench-measure RESULT_FILE COMMAND [ARGS...]\n");
        return 2;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t child = fork();
    if (child < 0) { perror("pkgbench-measure: fork"); return 2; }
    if (child == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "pkgbench-measure: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    // Wait for the exit without reaping, so /proc/PID/io can still be read.
    siginfo_t info;
    while (waitid(P_PID, child, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    clock_gettime(CLOCK_MONOTONIC, &end);
    long long write_bytes = -1, read_bytes = -1;
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/io", (int)child);
    int io = open(path, O_RDONLY);
    if (io >= 0) {
        ssize_t count = read(io, text, sizeof text - 1);
        if (count > 0) {
            text[count] = 0;
            write_bytes = io_field(text, "write_bytes: ");
            read_bytes = io_field(text, "read_bytes: ");
        }
        close(io);
    }
    int status = 0;
    struct rusage usage;
    while (wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {}
    if (write_bytes < 0) write_bytes = (long long)usage.ru_oublock * 512;
    if (read_bytes < 0) read_bytes = (long long)usage.ru_inblock * 512;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    double wall = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    FILE *result = fopen(argv[1], "w");
    if (!result) { perror("pkgbench-measure: result file"); return 2; }
    fprintf(result, "%d %.9f %.6f %.6f %ld %lld %lld\n", code, wall,
            (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6,
            (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6,
            usage.ru_maxrss, write_bytes, read_bytes);
    fclose(result);
    return 0;
}
