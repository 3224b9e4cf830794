/* How late a thread that does nothing else wakes for Poisson arrivals:
 * the floor under any sleeping open loop's send lag on this machine.
 *
 *   gcc -O2 bench/floor/wake_lateness.c -o /tmp/wake_lateness -lm
 *   taskset -c 1 /tmp/wake_lateness [RATE_PER_S] [COUNT]
 *
 * Sleeps with clock_nanosleep(TIMER_ABSTIME) to each arrival of a Poisson
 * schedule (default 20,000/s, 80,000 arrivals) with a 1 ns timer slack, as
 * mcbench's workers do, and prints percentiles of (woke - intended). No
 * sockets, no parsing: what is left is the kernel's and the VM's. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    double rate = argc > 1 ? atof(argv[1]) : 20000.0;
    int n = argc > 2 ? atoi(argv[2]) : 80000;
    if (rate <= 0 || n <= 0) {
        fprintf(stderr, "usage: wake_lateness [RATE_PER_S > 0] [COUNT > 0]\n");
        return 2;
    }
    long *late = malloc(sizeof(long) * n);
    if (!late) return 1;
    prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
    srand48(1);
    long due = now_ns() + 1000000;
    for (int i = 0; i < n; i++) {
        due += (long)(-log(1.0 - drand48()) * 1e9 / rate);
        struct timespec at = {due / 1000000000L, due % 1000000000L};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        long woke = now_ns();
        late[i] = woke > due ? woke - due : 0;
    }
    qsort(late, n, sizeof(long), by_value);
    printf("%.0f/s, %d arrivals: lateness p50 %.1f us, p90 %.1f, p99 %.1f, p99.9 %.1f, max %.0f\n",
           rate, n, late[n / 2] / 1e3, late[n * 9 / 10] / 1e3, late[n * 99 / 100] / 1e3,
           late[n * 999 / 1000] / 1e3, late[n - 1] / 1e3);
    free(late);
    return 0;
}
