/* A memcached-speaking delay line: the truth oracle for open-loop latency.
 *
 * Answers every ASCII get (a miss, END) and set (STORED) a drawn service
 * time after the request was read, on a single epoll thread. A connection's
 * replies keep their order (memcached's): a reply is due at
 * max(read + service, the connection's previous reply). Service times:
 *
 *   fixed:D            D µs
 *   normal:M:S         M µs mean, S µs deviation, clamped to [0, 2M]
 *   pareto:XM:A        scale XM µs, shape A (heavy tail)
 *   stall:D            D µs, and nothing is answered for 100 ms of every
 *                      second counted from the first request: a reply due
 *                      then goes out at the stall's end
 *   exp:M              exponential, mean M µs
 *   lognormal:MED:S    lognormal, median MED µs, S the deviation of its log
 *   bimodal:A:B:P      A µs, or B µs with probability P
 *
 * STALLS, optional (MIN:MAX:EVERY_MIN:EVERY_MAX, ms), adds stalls of the
 * whole server at random: after a gap uniform in [EVERY_MIN, EVERY_MAX],
 * nothing is answered for a time uniform in [MIN, MAX], counted from the
 * first request; a reply due during one goes out at its end. They are
 * drawn from a generator of their own, so that the service times drawn
 * are those of the same SEED without them.
 *
 * For each request it appends a line to LOG, in the order requests were
 * read: "drawn_ns late_ns held_ns", the service time drawn, how late past
 * its due time the reply was written (the server's own wake-up lateness),
 * and how long after the read it was due (the drawn time, or more behind
 * a stall or the connection's previous reply), so that a simulation can
 * give each request the service time it really had, and a closed loop's
 * truth is held + late.
 * The log is flushed on SIGTERM/SIGINT and at exit.
 *
 * Usage: delay_line PORT DIST LOG [SEED [STALLS]]
 * Build: cc -O2 -o delay_line delay_line.c -lm
 *
 * Not a cache: it stores nothing. It is a server whose latency is known.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 4096
#define MAX_PENDING (1 << 20)
#define STALL_PERIOD_NS 1000000000ULL
#define STALL_NS 100000000ULL

enum kind { FIXED, NORMAL, PARETO, STALL, EXPONENTIAL, LOGNORMAL, BIMODAL };
static enum kind dist;
static double p1, p2, p3; /* µs, or a share */

struct reply {
    uint64_t due;
    int fd;
    int stored; /* 1: STORED, 0: END */
    uint64_t seq;
};

/* A min-heap of replies by due time (ties by arrival). */
static struct reply *heap;
static size_t heap_len;

static int before(const struct reply *a, const struct reply *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(struct reply r)
{
    size_t i = heap_len++;
    heap[i] = r;
    while (i > 0 && before(&heap[i], &heap[(i - 1) / 2])) {
        struct reply t = heap[i];
        heap[i] = heap[(i - 1) / 2];
        heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static struct reply heap_pop(void)
{
    struct reply top = heap[0];
    heap[0] = heap[--heap_len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < heap_len && before(&heap[l], &heap[m]))
            m = l;
        if (r < heap_len && before(&heap[r], &heap[m]))
            m = r;
        if (m == i)
            break;
        struct reply t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
    return top;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* xorshift64* and uniform (0, 1]. */
static uint64_t rng_state = 88172645463325252ULL;
static double uniform_of(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return ((*state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0) + 1e-17;
}
static double uniform(void)
{
    return uniform_of(&rng_state);
}

static uint64_t draw_ns(void)
{
    double us;
    switch (dist) {
    case NORMAL: {
        double z = sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
        us = p1 + p2 * z;
        us = us < 0 ? 0 : us > 2 * p1 ? 2 * p1 : us;
        break;
    }
    case PARETO:
        us = p1 / pow(uniform(), 1.0 / p2);
        break;
    case EXPONENTIAL:
        us = -p1 * log(uniform());
        break;
    case LOGNORMAL: {
        double z = sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
        us = p1 * exp(p2 * z);
        break;
    }
    case BIMODAL:
        us = uniform() <= p3 ? p2 : p1;
        break;
    default:
        us = p1;
    }
    return (uint64_t)(us * 1000);
}

/* Random stalls (STALLS): their windows from the first request, ns. */
#define MAX_STALLS 100000
static double stall_min, stall_max, gap_min, gap_max; /* ms */
static uint64_t stall_rng = 0x9e3779b97f4a7c15ULL;
static uint64_t (*stall_windows)[2];
static size_t stall_count;

static void draw_stalls(uint64_t origin)
{
    uint64_t t = origin;
    stall_windows = malloc(sizeof(*stall_windows) * MAX_STALLS);
    if (!stall_windows)
        return;
    while (stall_count < MAX_STALLS && t < origin + 3600ULL * 1000000000ULL) {
        t += (uint64_t)((gap_min + (gap_max - gap_min) * uniform_of(&stall_rng)) * 1e6);
        uint64_t len = (uint64_t)((stall_min + (stall_max - stall_min) * uniform_of(&stall_rng)) * 1e6);
        stall_windows[stall_count][0] = t;
        stall_windows[stall_count][1] = t + len;
        stall_count++;
        t += len;
    }
}

/* The end of the random stall `t` falls in, or `t`. */
static uint64_t after_random_stall(uint64_t t)
{
    size_t lo = 0, hi = stall_count;
    while (lo < hi) { /* the first window starting after t */
        size_t mid = (lo + hi) / 2;
        if (stall_windows[mid][0] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && t < stall_windows[lo - 1][1])
        return stall_windows[lo - 1][1];
    return t;
}

/* With stalls: when a reply due at `due` can go out. */
static uint64_t stall_origin;
static uint64_t release_at(uint64_t due)
{
    if (due < stall_origin)
        return due;
    if (dist == STALL) {
        uint64_t into = (due - stall_origin) % STALL_PERIOD_NS;
        if (into < STALL_NS)
            due += STALL_NS - into;
    }
    return stall_count ? after_random_stall(due) : due;
}

struct conn {
    char buf[65536];
    size_t len;
    uint64_t last_due;
    uint64_t pending; /* replies not yet written */
    int closing;
};
static struct conn *conns[MAX_FD];

static FILE *log_file;
static uint64_t *log_drawn, *log_late, *log_held; /* by arrival number */
static uint64_t seq;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void write_log(void)
{
    for (uint64_t i = 0; i < seq && i < MAX_PENDING * 16ULL; i++)
        fprintf(log_file, "%llu %llu %llu\n", (unsigned long long)log_drawn[i],
                (unsigned long long)log_late[i], (unsigned long long)log_held[i]);
    fclose(log_file);
}

static void close_conn(int ep, int fd)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    free(conns[fd]);
    conns[fd] = NULL;
}

/* Schedules a reply for every whole request line in the buffer. */
static void take_requests(int fd, uint64_t t)
{
    struct conn *c = conns[fd];
    size_t start = 0;
    for (;;) {
        char *nl = memchr(c->buf + start, '\n', c->len - start);
        if (!nl)
            break;
        size_t line_end = nl - c->buf + 1;
        char *line = c->buf + start;
        int is_get = !strncmp(line, "get ", 4);
        int is_set = !strncmp(line, "set ", 4);
        size_t consumed = line_end;
        if (is_set) {
            /* set <key> <flags> <exptime> <bytes> [noreply]\r\n<data>\r\n */
            unsigned long bytes = 0;
            char key[256];
            unsigned flags;
            long exp;
            if (sscanf(line, "set %255s %u %ld %lu", key, &flags, &exp, &bytes) != 4) {
                c->closing = 1;
                return;
            }
            if (line_end + bytes + 2 > c->len)
                break; /* the data block has not all come */
            consumed = line_end + bytes + 2;
        }
        if (is_get || is_set) {
            if (heap_len == MAX_PENDING || seq >= MAX_PENDING * 16ULL) {
                c->closing = 1;
                return;
            }
            if (seq == 0) {
                stall_origin = t;
                if (stall_max > 0)
                    draw_stalls(t);
            }
            uint64_t drawn = draw_ns();
            uint64_t due = release_at(t + drawn);
            if (due < c->last_due)
                due = c->last_due;
            c->last_due = due;
            log_drawn[seq] = drawn;
            log_held[seq] = due - t;
            heap_push((struct reply){ .due = due, .fd = fd, .stored = is_set, .seq = seq });
            seq++;
            c->pending++;
        }
        start = consumed;
    }
    memmove(c->buf, c->buf + start, c->len - start);
    c->len -= start;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: delay_line PORT fixed:D|normal:M:S|pareto:XM:A|stall:D|exp:M|"
                        "lognormal:MED:S|bimodal:A:B:P LOG [SEED [MIN:MAX:EVERY_MIN:EVERY_MAX]]\n");
        return 2;
    }
    const char *d = argv[2];
    if (sscanf(d, "fixed:%lf", &p1) == 1)
        dist = FIXED;
    else if (sscanf(d, "normal:%lf:%lf", &p1, &p2) == 2)
        dist = NORMAL;
    else if (sscanf(d, "pareto:%lf:%lf", &p1, &p2) == 2 && p2 > 0)
        dist = PARETO;
    else if (sscanf(d, "stall:%lf", &p1) == 1)
        dist = STALL;
    else if (sscanf(d, "exp:%lf", &p1) == 1)
        dist = EXPONENTIAL;
    else if (sscanf(d, "lognormal:%lf:%lf", &p1, &p2) == 2)
        dist = LOGNORMAL;
    else if (sscanf(d, "bimodal:%lf:%lf:%lf", &p1, &p2, &p3) == 3)
        dist = BIMODAL;
    else {
        fprintf(stderr, "delay_line: unknown distribution %s\n", d);
        return 2;
    }
    if (argc > 4) {
        rng_state = strtoull(argv[4], NULL, 10) | 1;
        stall_rng ^= rng_state;
    }
    if (argc > 5 && (sscanf(argv[5], "%lf:%lf:%lf:%lf", &stall_min, &stall_max, &gap_min, &gap_max) != 4
                     || stall_min < 0 || stall_max < stall_min || gap_min <= 0 || gap_max < gap_min)) {
        fprintf(stderr, "delay_line: stalls are MIN:MAX:EVERY_MIN:EVERY_MAX in ms, got %s\n", argv[5]);
        return 2;
    }
    log_file = fopen(argv[3], "w");
    heap = malloc(sizeof(*heap) * MAX_PENDING);
    log_drawn = malloc(sizeof(uint64_t) * MAX_PENDING * 16);
    log_late = calloc(MAX_PENDING * 16, sizeof(uint64_t));
    log_held = malloc(sizeof(uint64_t) * MAX_PENDING * 16);
    if (!log_file || !heap || !log_drawn || !log_late || !log_held) {
        perror("delay_line");
        return 1;
    }
    /* Timers wake as close to their time as the kernel can: the default
     * 50 µs slack would be most of each reply's lateness. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* The stop signals are blocked but while the loop waits, so that one
     * that comes between the check of `stop` and the wait ends the wait. */
    sigset_t stops, waiting;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    sigprocmask(SIG_BLOCK, &stops, &waiting);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[1])),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1024)) {
        perror("delay_line: listen");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = ls };
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    struct epoll_event evs[256];
    while (!stop) {
        struct timespec ts, *tsp = NULL;
        if (heap_len) {
            uint64_t t = now_ns();
            uint64_t wait = heap[0].due > t ? heap[0].due - t : 0;
            ts.tv_sec = wait / 1000000000ULL;
            ts.tv_nsec = wait % 1000000000ULL;
            tsp = &ts;
        }
        int n = epoll_pwait2(ep, evs, 256, tsp, &waiting);
        if (n < 0 && errno != EINTR) {
            perror("delay_line: epoll");
            break;
        }
        uint64_t t = now_ns();
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == ls) {
                int cfd;
                while ((cfd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (cfd >= MAX_FD) {
                        close(cfd);
                        continue;
                    }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                    conns[cfd] = calloc(1, sizeof(struct conn));
                    struct epoll_event ce = { .events = EPOLLIN, .data.fd = cfd };
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ce);
                }
                continue;
            }
            struct conn *c = conns[fd];
            if (!c)
                continue;
            ssize_t r = read(fd, c->buf + c->len, sizeof(c->buf) - c->len);
            if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR))) {
                c->closing = 1;
            } else if (r > 0) {
                c->len += r;
                /* Its own read time: a batch's later reads come later. */
                take_requests(fd, now_ns());
                if (c->len == sizeof(c->buf))
                    c->closing = 1; /* a line longer than the buffer */
            }
            if (c->closing && c->pending == 0)
                close_conn(ep, fd);
            else if (c->closing) /* no more reads: its replies still go out */
                epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
        }
        /* Every reply that is due goes out. */
        t = now_ns();
        while (heap_len && heap[0].due <= t) {
            struct reply r = heap_pop();
            /* Each reply's own lateness: a batch's writes take their turn. */
            log_late[r.seq] = now_ns() - r.due;
            struct conn *c = conns[r.fd];
            if (!c)
                continue;
            const char *msg = r.stored ? "STORED\r\n" : "END\r\n";
            /* Small replies into an empty-enough socket buffer: a short
             * write means a client that stopped reading; it is dropped. */
            if (write(r.fd, msg, strlen(msg)) != (ssize_t)strlen(msg))
                c->closing = 1;
            c->pending--;
            if (c->closing && c->pending == 0)
                close_conn(ep, r.fd);
        }
    }
    write_log();
    return 0;
}
