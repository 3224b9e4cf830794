/* launch: runs a command and prints its own CPU and peak RSS on stderr's
 * last line as "launch: user_us sys_us maxrss_kb exit".
 *
 * bench/compare.py starts every tool through it. A process forked from
 * Python starts with Python's resident pages counted, and ru_maxrss
 * survives exec: the tool's figure would be at least Python's. Forked
 * from this small process instead, the child's peak is its own. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: launch COMMAND [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("wait4");
        return 1;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(stderr, "launch: %ld %ld %ld %d\n",
            ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec,
            ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec, ru.ru_maxrss, code);
    return code;
}
