/*
 * floor: the cheapest client that still does what mcbench's rows ask for,
 * to tell what a row costs on this machine whatever the tool.
 *
 * It sends the rows' workload (30 B keys, 200 B values, get:set 9:1 over
 * 10,000 keys that `floor PORT load` sets) and counts answers by their known lengths
 * (every get hits), with no parsing, no timing, no histograms. So its CPU
 * per op is the reference cost of keeping that schedule on this machine,
 * and its I/O back ends measure whether io_uring beats epoll here.
 *
 *   floor PORT load          sets the 10,000 keys, then exits
 *   floor PORT CONNS DEPTH SECONDS RATE IO [READ_DELAY_US]
 *     RATE  0: closed loop (a connection is refilled once half its depth
 *           is answered, as mcbench does); else Poisson arrivals, ops/s.
 *     IO    epoll : level-triggered epoll, recv/send per connection;
 *           timer : open loop only; sleeps until the next arrival with
 *                   replies unwatched, reads them at the next arrival
 *                   (what reading answers late costs, as a client timing
 *                   them by kernel receive timestamps could; fetching the
 *                   timestamps is left out);
 *           uring : io_uring, one recv always armed per connection, sends
 *                   queued, one io_uring_enter per loop turn.
 *     READ_DELAY_US  closed loop, epoll only, under 1 s: wait this long after a wake-up
 *           before reading, so that answers pile up (what fewer, larger
 *           reads would save; every answer's timing would be late by up
 *           to this much).
 *
 * Prints one line: ops, CPU user and sys seconds (getrusage, the measured
 * window only), ns per op.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KEYS 10000
#define KEY_LEN 30
#define VALUE_LEN 200
#define MAX_DEPTH 64
#define RBUF 16384
#define WBUF 65536

enum io { IO_EPOLL, IO_TIMER, IO_URING };

struct conn {
    int fd;
    /* Answer lengths still expected, bytes, in order (a ring). */
    int expect[MAX_DEPTH];
    int head, len;
    int got; /* bytes of the oldest answer received so far */
    char wbuf[WBUF];
    int wlen;       /* bytes queued for the next send */
    int sending;    /* io_uring: a send is in flight */
    char rbuf[RBUF];
};

static char value[VALUE_LEN];
static uint64_t rng = 88172645463325252ULL;
static int depth;

static uint64_t next_rand(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* Queues one request (9 gets : 1 set) on c; returns its answer's length. */
static void queue_request(struct conn *c) {
    char key[KEY_LEN + 1];
    snprintf(key, sizeof key, "floor:%024llu", (unsigned long long)(next_rand() % KEYS));
    int answer;
    if (next_rand() % 10 == 0) {
        c->wlen += sprintf(c->wbuf + c->wlen, "set %s 0 0 %d\r\n", key, VALUE_LEN);
        memcpy(c->wbuf + c->wlen, value, VALUE_LEN);
        c->wlen += VALUE_LEN;
        memcpy(c->wbuf + c->wlen, "\r\n", 2);
        c->wlen += 2;
        answer = 8; /* STORED\r\n */
    } else {
        c->wlen += sprintf(c->wbuf + c->wlen, "get %s\r\n", key);
        /* VALUE <key> 0 200\r\n<value>\r\nEND\r\n */
        answer = 6 + KEY_LEN + 6 + 2 + VALUE_LEN + 2 + 5;
    }
    c->expect[(c->head + c->len) % MAX_DEPTH] = answer;
    c->len++;
}

/* Accounts n received bytes; returns the answers they completed. */
static long account(struct conn *c, int n) {
    long done = 0;
    while (n > 0 && c->len > 0) {
        int need = c->expect[c->head] - c->got;
        if (n < need) { c->got += n; return done; }
        n -= need;
        c->got = 0;
        c->head = (c->head + 1) % MAX_DEPTH;
        c->len--;
        done++;
    }
    if (n > 0) { fprintf(stderr, "floor: more bytes than answers\n"); exit(1); }
    return done;
}

static void send_all(struct conn *c) {
    int off = 0;
    while (off < c->wlen) {
        int n = send(c->fd, c->wbuf + off, c->wlen - off, 0);
        if (n < 0) { if (errno == EAGAIN) continue; die("send"); }
        off += n;
    }
    c->wlen = 0;
}

/* Closed loop: refill once at most half the depth is unanswered. */
static void refill(struct conn *c) {
    if (c->len > depth / 2) return;
    while (c->len < depth) queue_request(c);
}

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (void *)&a, sizeof a)) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Sets every key once, blocking, so that every get hits. */
static void preload(struct conn *c) {
    for (int k = 0; k < KEYS; k += 100) {
        c->wlen = 0;
        for (int i = k; i < k + 100; i++) {
            c->wlen += sprintf(c->wbuf + c->wlen, "set floor:%024d 0 0 %d\r\n", i, VALUE_LEN);
            memcpy(c->wbuf + c->wlen, value, VALUE_LEN);
            c->wlen += VALUE_LEN;
            memcpy(c->wbuf + c->wlen, "\r\n", 2);
            c->wlen += 2;
        }
        send_all(c);
        int want = 100 * 8, got = 0;
        while (got < want) {
            int n = recv(c->fd, c->rbuf, RBUF, 0);
            if (n <= 0) die("preload recv");
            got += n;
        }
    }
}

static double cpu_s(int user) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    struct timeval t = user ? r.ru_utime : r.ru_stime;
    return t.tv_sec + t.tv_usec / 1e6;
}

/* Poisson arrivals: the next one after t, ns. */
static long long next_arrival(long long t, double rate) {
    double u = (next_rand() >> 11) * (1.0 / 9007199254740992.0);
    return t + (long long)(-log(1.0 - u) / rate * 1e9);
}

/* Open loop: an arrival goes to a random connection with a free slot. */
static struct conn *free_conn(struct conn *cs, int n) {
    int i = next_rand() % n;
    for (int k = 0; k < n; k++, i = (i + 1) % n)
        if (cs[i].len < depth) return &cs[i];
    return NULL; /* every slot taken: the floor skips the arrival */
}

/* Closed loop, epoll: after a wake-up, wait this long before reading, ns
 * (0: read at once). What delaying reads would save, and cost. */
static long long read_delay_ns;

static long run_epoll(struct conn *cs, int n, long long end, double rate, int timer) {
    int ep = epoll_create1(0);
    for (int i = 0; i < n; i++) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &e);
    }
    long done = 0;
    long long next = now_ns();
    if (rate == 0)
        for (int i = 0; i < n; i++) { refill(&cs[i]); send_all(&cs[i]); }
    struct epoll_event ev[256];
    for (;;) {
        long long now = now_ns();
        if (now >= end) return done;
        long long wait = end - now;
        if (rate > 0) {
            for (; next <= now; next = next_arrival(next, rate)) {
                struct conn *c = free_conn(cs, n);
                if (c) { queue_request(c); send_all(c); }
            }
            wait = next - now;
        }
        struct timespec ts = {wait / 1000000000, wait % 1000000000};
        int got;
        if (timer) {
            clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
            struct timespec zero = {0, 0};
            got = syscall(SYS_epoll_pwait2, ep, ev, 256, &zero, NULL, 0);
        } else {
            got = syscall(SYS_epoll_pwait2, ep, ev, 256, &ts, NULL, 0);
            if (got > 0 && read_delay_ns > 0) {
                struct timespec d = {0, read_delay_ns}, zero = {0, 0};
                clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
                got = syscall(SYS_epoll_pwait2, ep, ev, 256, &zero, NULL, 0);
            }
        }
        for (int i = 0; i < got; i++) {
            struct conn *c = &cs[ev[i].data.u32];
            int r = recv(c->fd, c->rbuf, RBUF, 0);
            if (r <= 0) die("recv");
            done += account(c, r);
            if (rate == 0) { refill(c); if (c->wlen) send_all(c); }
        }
    }
}

/* io_uring: user_data is the connection index, plus 1<<32 for a send. */
#define SEND_TAG (1ULL << 32)

static void arm_recv(struct io_uring *ring, struct conn *cs, int i) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    io_uring_prep_recv(sqe, cs[i].fd, cs[i].rbuf, RBUF, 0);
    io_uring_sqe_set_data64(sqe, i);
}

static void arm_send(struct io_uring *ring, struct conn *cs, int i) {
    struct conn *c = &cs[i];
    if (c->sending || c->wlen == 0) return;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    io_uring_prep_send(sqe, c->fd, c->wbuf, c->wlen, 0);
    io_uring_sqe_set_data64(sqe, SEND_TAG | i);
    c->sending = 1;
}

static long run_uring(struct conn *cs, int n, long long end, double rate) {
    struct io_uring ring;
    struct io_uring_params p = {0};
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int e = io_uring_queue_init_params(4 * n + 64, &ring, &p);
    if (e < 0) { errno = -e; die("io_uring_queue_init"); }
    long done = 0;
    long long next = now_ns();
    for (int i = 0; i < n; i++) {
        arm_recv(&ring, cs, i);
        if (rate == 0) { refill(&cs[i]); arm_send(&ring, cs, i); }
    }
    for (;;) {
        long long now = now_ns();
        if (now >= end) return done;
        long long wait = end - now;
        if (rate > 0) {
            for (; next <= now; next = next_arrival(next, rate)) {
                struct conn *c = free_conn(cs, n);
                if (c) { queue_request(c); arm_send(&ring, cs, c - cs); }
            }
            wait = next - now;
        }
        struct __kernel_timespec ts = {wait / 1000000000, wait % 1000000000};
        struct io_uring_cqe *cqe;
        e = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, NULL);
        if (e < 0 && e != -ETIME && e != -EINTR) { errno = -e; die("io_uring wait"); }
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            seen++;
            uint64_t tag = io_uring_cqe_get_data64(cqe);
            struct conn *c = &cs[tag & 0xffffffff];
            if (cqe->res <= 0) { errno = -cqe->res; die("io_uring op"); }
            if (tag & SEND_TAG) {
                /* Requests queued behind a send go out together; the
                 * sent bytes are dropped from the front. */
                memmove(c->wbuf, c->wbuf + cqe->res, c->wlen - cqe->res);
                c->wlen -= cqe->res;
                c->sending = 0;
                arm_send(&ring, cs, tag & 0xffffffff);
                continue;
            }
            done += account(c, cqe->res);
            arm_recv(&ring, cs, tag);
            if (rate == 0) { refill(c); arm_send(&ring, cs, tag); }
        }
        io_uring_cq_advance(&ring, seen);
    }
}

int main(int argc, char **argv) {
    memset(value, '0', VALUE_LEN);
    if (argc == 3 && !strcmp(argv[2], "load")) {
        static struct conn loader;
        loader.fd = dial(atoi(argv[1]));
        preload(&loader);
        return 0;
    }
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: floor PORT load | floor PORT CONNS DEPTH SECONDS RATE epoll|timer|uring [READ_DELAY_US]\n");
        return 2;
    }
    int port = atoi(argv[1]), n = atoi(argv[2]);
    depth = atoi(argv[3]);
    double seconds = atof(argv[4]), rate = atof(argv[5]);
    enum io io = !strcmp(argv[6], "uring") ? IO_URING : !strcmp(argv[6], "timer") ? IO_TIMER : IO_EPOLL;
    if (argc == 8) read_delay_ns = atoll(argv[7]) * 1000;
    if (n < 1 || depth < 1 || depth > MAX_DEPTH || seconds <= 0 || (io == IO_TIMER && rate == 0) ||
        read_delay_ns < 0 || read_delay_ns >= 1000000000LL || (read_delay_ns && (rate > 0 || io != IO_EPOLL))) {
        fprintf(stderr, "floor: bad arguments\n");
        return 2;
    }
    prctl(PR_SET_TIMERSLACK, 1UL);
    struct conn *cs = calloc(n, sizeof *cs);
    for (int i = 0; i < n; i++) cs[i].fd = dial(port);
    double u0 = cpu_s(1), s0 = cpu_s(0);
    long long end = now_ns() + (long long)(seconds * 1e9);
    long done = io == IO_URING ? run_uring(cs, n, end, rate) : run_epoll(cs, n, end, rate, io == IO_TIMER);
    double user = cpu_s(1) - u0, sys = cpu_s(0) - s0;
    printf("ops %ld user_s %.3f sys_s %.3f ns_op %.0f\n", done, user, sys, (user + sys) * 1e9 / done);
    return 0;
}
