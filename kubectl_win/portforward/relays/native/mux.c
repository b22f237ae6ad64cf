/*
 * kwin-relay --mux: the multiplexing relay (protocol in docs/port-forward.md).
 *
 * One process carries every connection of a forward. Frames arrive on stdin: the main thread
 * checks each one and never blocks on a socket or on stdout. Each stream has a writer thread
 * (connect, then queued data -> socket, returning window credit) and a reader thread
 * (socket -> stdout, only while it has credit). Sockets are non-blocking and waited on with
 * select() in one-second slices, so a stream that ends wakes its threads without closing a
 * handle another thread may still be using. A malformed frame ends the process with exit code 8
 * and one line on stderr; the end of stdin on a frame boundary ends it with 0. Payload is copied,
 * never interpreted; nothing is ever executed.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include "mux.h"

#define HEADER 9
#define MAX_PAYLOAD 262144
#define WINDOW 4194304
#define MAX_WINDOW (1L << 30)
#define MAX_STREAMS 4096
#define MAX_QUEUED_DATAGRAMS 4096
#define INPUT_SIZE (1048576 + HEADER + MAX_PAYLOAD)
#define EXIT_PROTOCOL 8
#define THREAD_STACK (64 * 1024)

enum { F_HELLO, F_OPEN, F_OPENED, F_DATA, F_EOF, F_CLOSE, F_WINDOW };
enum { C_CLOSED, C_REFUSED, C_UNRESOLVED, C_UNREACHABLE, C_RESET, C_PROTOCOL, C_ABORTED };

typedef struct chunk {
    struct chunk *next;
    DWORD length;
    unsigned char data[];
} chunk;

typedef struct stream {
    DWORD id;
    int udp;
    SOCKET sock;
    volatile LONG dead;
    volatile LONG refs;
    CRITICAL_SECTION lock;
    CONDITION_VARIABLE changed;
    chunk *head, *tail;
    int queued, eof_queued, read_done, write_done;
    LONGLONG credit; /* what we may still send */
    LONGLONG window; /* what the forwarder may still send us */
    char host[254];
    char port[6];
} stream;

static CRITICAL_SECTION out_lock, table_lock;
#define SMALL_FRAME 16384
static unsigned char small_frame[HEADER + SMALL_FRAME]; /* under out_lock */
static HANDLE out_handle;
static stream *table[MAX_STREAMS];
static unsigned char input[INPUT_SIZE];

static void put32(unsigned char *p, DWORD value) {
    p[0] = (unsigned char)(value >> 24);
    p[1] = (unsigned char)(value >> 16);
    p[2] = (unsigned char)(value >> 8);
    p[3] = (unsigned char)value;
}

static DWORD get32(const unsigned char *p) {
    return ((DWORD)p[0] << 24) | ((DWORD)p[1] << 16) | ((DWORD)p[2] << 8) | (DWORD)p[3];
}

static int write_handle(HANDLE handle, const void *data, DWORD length) {
    const char *bytes = data;
    while (length > 0) {
        DWORD written = 0;
        if (!WriteFile(handle, bytes, length, &written, NULL) || written == 0) {
            return 0;
        }
        bytes += written;
        length -= written;
    }
    return 1;
}

static void protocol_error(const char *why) {
    HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
    static const char prefix[] = "kwin-relay: protocol error: ";
    if (err != INVALID_HANDLE_VALUE && err != NULL) {
        write_handle(err, prefix, sizeof(prefix) - 1);
        write_handle(err, why, (DWORD)lstrlenA(why));
        write_handle(err, "\n", 1);
    }
    ExitProcess(EXIT_PROTOCOL);
}

/* Stream threads are reused: creating one under Wine costs as much as the rest of a new stream's
 * set-up, and a stream needs two. A thread whose work ended waits up to
 * IDLE_THREAD_MS for the next; only when no thread is idle is a new one created. */
#define IDLE_THREAD_MS 30000
typedef struct job {
    LPTHREAD_START_ROUTINE run;
    void *arg;
    struct job *next;
} job;
static CRITICAL_SECTION pool_lock;
static CONDITION_VARIABLE pool_wake;
static job *jobs_head, *jobs_tail;
static LONG idle_threads, queued_jobs; /* under pool_lock; idle_threads >= queued_jobs */

static DWORD WINAPI pool_thread(LPVOID first) {
    job *next = first;
    for (;;) {
        LPTHREAD_START_ROUTINE run = next->run;
        void *arg = next->arg;
        HeapFree(GetProcessHeap(), 0, next);
        run(arg);
        EnterCriticalSection(&pool_lock);
        idle_threads++;
        while (jobs_head == NULL) {
            if (!SleepConditionVariableCS(&pool_wake, &pool_lock, IDLE_THREAD_MS) && jobs_head == NULL) {
                idle_threads--;
                LeaveCriticalSection(&pool_lock);
                return 0;
            }
        }
        next = jobs_head;
        jobs_head = next->next;
        if (jobs_head == NULL) {
            jobs_tail = NULL;
        }
        queued_jobs--;
        idle_threads--;
        LeaveCriticalSection(&pool_lock);
    }
}

/* Run run(arg) on an idle pool thread, or on a new one; 0 when no thread could be had. */
static int start_thread(LPTHREAD_START_ROUTINE run, void *arg) {
    HANDLE thread;
    job *work = HeapAlloc(GetProcessHeap(), 0, sizeof(job));
    if (work == NULL) {
        return 0;
    }
    work->run = run;
    work->arg = arg;
    work->next = NULL;
    EnterCriticalSection(&pool_lock);
    if (idle_threads > queued_jobs) {
        if (jobs_tail != NULL) {
            jobs_tail->next = work;
        } else {
            jobs_head = work;
        }
        jobs_tail = work;
        queued_jobs++;
        WakeConditionVariable(&pool_wake);
        LeaveCriticalSection(&pool_lock);
        return 1;
    }
    LeaveCriticalSection(&pool_lock);
    thread = CreateThread(NULL, THREAD_STACK, pool_thread, work, STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
    if (thread == NULL) {
        HeapFree(GetProcessHeap(), 0, work);
        return 0;
    }
    CloseHandle(thread);
    return 1;
}

static void emit(int type, DWORD id, const void *payload, DWORD length) {
    unsigned char header[HEADER];
    int ok;
    header[0] = (unsigned char)type;
    put32(header + 1, id);
    put32(header + 5, length);
    EnterCriticalSection(&out_lock);
    if (length <= SMALL_FRAME) { /* one write: each one is a round trip through the pipe */
        CopyMemory(small_frame, header, HEADER);
        if (length > 0) {
            CopyMemory(small_frame + HEADER, payload, length);
        }
        ok = write_handle(out_handle, small_frame, HEADER + length);
    } else {
        ok = write_handle(out_handle, header, HEADER) && write_handle(out_handle, payload, length);
    }
    LeaveCriticalSection(&out_lock);
    if (!ok) {
        ExitProcess(0); /* the forwarder is gone */
    }
}

static void release(stream *s) {
    if (InterlockedDecrement(&s->refs) == 0) {
        chunk *c = s->head;
        while (c != NULL) {
            chunk *next = c->next;
            HeapFree(GetProcessHeap(), 0, c);
            c = next;
        }
        if (s->sock != INVALID_SOCKET) {
            closesocket(s->sock);
        }
        DeleteCriticalSection(&s->lock);
        HeapFree(GetProcessHeap(), 0, s);
    }
}

/* Remove the stream and wake its threads; code < 0 sends no CLOSE (the forwarder closed it). */
static void finish(stream *s, int code, const char *why) {
    int removed = 0, i;
    SOCKET sock;
    EnterCriticalSection(&table_lock);
    for (i = 0; i < MAX_STREAMS; i++) {
        if (table[i] == s) {
            table[i] = NULL;
            removed = 1;
            break;
        }
    }
    LeaveCriticalSection(&table_lock);
    if (!removed) {
        return;
    }
    EnterCriticalSection(&s->lock);
    InterlockedExchange(&s->dead, 1);
    sock = s->sock;
    WakeAllConditionVariable(&s->changed);
    LeaveCriticalSection(&s->lock);
    if (code >= 0) {
        unsigned char payload[1 + 256];
        DWORD length = (DWORD)lstrlenA(why);
        if (length > 256) {
            length = 256;
        }
        payload[0] = (unsigned char)code;
        CopyMemory(payload + 1, why, length);
        emit(F_CLOSE, s->id, payload, 1 + length);
    }
    if (sock != INVALID_SOCKET) {
        shutdown(sock, SD_BOTH);
    }
    release(s); /* the table's reference */
}

static void half_done(stream *s, int reader) {
    int both;
    EnterCriticalSection(&s->lock);
    if (reader) {
        s->read_done = 1;
    } else {
        s->write_done = 1;
    }
    both = s->read_done && s->write_done;
    LeaveCriticalSection(&s->lock);
    if (both) {
        finish(s, C_CLOSED, "");
    }
}

/* 1 when the socket is ready, 0 when the stream has ended meanwhile. */
static int wait_socket(stream *s, int for_write) {
    while (!s->dead) {
        fd_set set;
        struct timeval slice = {1, 0};
        int ready;
        FD_ZERO(&set);
        FD_SET(s->sock, &set);
        ready = select(0, for_write ? NULL : &set, for_write ? &set : NULL, NULL, &slice);
        if (ready != 0) {
            return 1; /* ready, or an error the next call reports */
        }
    }
    return 0;
}

static int send_all(stream *s, const unsigned char *data, DWORD length) {
    while (length > 0) {
        int sent = send(s->sock, (const char *)data, (int)length, 0);
        if (sent == SOCKET_ERROR) {
            if (WSAGetLastError() != WSAEWOULDBLOCK || !wait_socket(s, 1)) {
                return 0;
            }
            continue;
        }
        data += sent;
        length -= (DWORD)sent;
    }
    return 1;
}

static DWORD WINAPI stream_reader(LPVOID arg) {
    stream *s = arg;
    char *buffer = HeapAlloc(GetProcessHeap(), 0, MAX_PAYLOAD);
    for (;;) {
        int size, got;
        EnterCriticalSection(&s->lock);
        while (!s->udp && s->credit <= 0 && !s->dead) {
            SleepConditionVariableCS(&s->changed, &s->lock, INFINITE);
        }
        size = s->udp ? 65535 : (int)(s->credit < MAX_PAYLOAD ? s->credit : MAX_PAYLOAD);
        LeaveCriticalSection(&s->lock);
        if (buffer == NULL) {
            finish(s, C_RESET, "out of memory");
            break;
        }
        /* Read first and wait only when nothing is there: one call per read while data flows. */
        got = recv(s->sock, buffer, size, 0);
        if (s->dead) {
            break;
        }
        if (got == SOCKET_ERROR) {
            int error = WSAGetLastError();
            if (error == WSAEWOULDBLOCK) {
                if (!wait_socket(s, 0)) {
                    break;
                }
                continue;
            }
            if (s->udp && (error == WSAECONNRESET || error == WSAEMSGSIZE)) {
                continue; /* UDP: an ICMP error for an earlier datagram, or a truncated one */
            }
            finish(s, C_RESET, "connection reset");
            break;
        }
        if (s->udp) {
            emit(F_DATA, s->id, buffer, (DWORD)got);
            continue;
        }
        if (got == 0) {
            emit(F_EOF, s->id, NULL, 0);
            half_done(s, 1);
            break;
        }
        EnterCriticalSection(&s->lock);
        s->credit -= got;
        LeaveCriticalSection(&s->lock);
        emit(F_DATA, s->id, buffer, (DWORD)got);
    }
    if (buffer != NULL) {
        HeapFree(GetProcessHeap(), 0, buffer);
    }
    release(s);
    return 0;
}

static SOCKET connect_stream(stream *s, int *code, const char **why) {
    struct addrinfo hints, *found = NULL, *candidate;
    SOCKET result = INVALID_SOCKET;
    int last_error = 0;
    ZeroMemory(&hints, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = s->udp ? SOCK_DGRAM : SOCK_STREAM;
    hints.ai_protocol = s->udp ? IPPROTO_UDP : IPPROTO_TCP;
    if (getaddrinfo(s->host, s->port, &hints, &found) != 0 || found == NULL) {
        *code = C_UNRESOLVED;
        *why = "cannot resolve host";
        return INVALID_SOCKET;
    }
    for (candidate = found; candidate != NULL && result == INVALID_SOCKET; candidate = candidate->ai_next) {
        SOCKET sock = socket(candidate->ai_family, candidate->ai_socktype, candidate->ai_protocol);
        if (sock == INVALID_SOCKET) {
            last_error = WSAGetLastError();
            continue;
        }
        if (connect(sock, candidate->ai_addr, (int)candidate->ai_addrlen) == 0) {
            result = sock;
        } else {
            last_error = WSAGetLastError();
            closesocket(sock);
        }
    }
    freeaddrinfo(found);
    if (result == INVALID_SOCKET) {
        *code = last_error == WSAECONNREFUSED ? C_REFUSED : C_UNREACHABLE;
        *why = last_error == WSAECONNREFUSED ? "connection refused" : "connect failed";
        return INVALID_SOCKET;
    }
    {
        u_long nonblocking = 1;
        BOOL on = TRUE;
        if (!s->udp) {
            setsockopt(result, IPPROTO_TCP, TCP_NODELAY, (const char *)&on, sizeof(on));
        }
        ioctlsocket(result, FIONBIO, &nonblocking);
    }
    return result;
}

static DWORD WINAPI stream_writer(LPVOID arg) {
    stream *s = arg;
    int code = C_UNREACHABLE;
    const char *why = "connect failed";
    SOCKET sock = connect_stream(s, &code, &why);
    if (sock == INVALID_SOCKET) {
        finish(s, code, why);
        release(s);
        return 0;
    }
    EnterCriticalSection(&s->lock);
    if (s->dead) {
        LeaveCriticalSection(&s->lock);
        closesocket(sock);
        release(s);
        return 0;
    }
    s->sock = sock;
    LeaveCriticalSection(&s->lock);
    emit(F_OPENED, s->id, NULL, 0);
    InterlockedIncrement(&s->refs);
    if (!start_thread(stream_reader, s)) {
        release(s);
        finish(s, C_RESET, "cannot start a thread");
        release(s);
        return 0;
    }
    for (;;) {
        chunk *c;
        EnterCriticalSection(&s->lock);
        while (s->head == NULL && !s->eof_queued && !s->dead) {
            SleepConditionVariableCS(&s->changed, &s->lock, INFINITE);
        }
        if (s->dead) {
            LeaveCriticalSection(&s->lock);
            break;
        }
        c = s->head;
        if (c != NULL) {
            s->head = c->next;
            if (s->head == NULL) {
                s->tail = NULL;
            }
            s->queued--;
        }
        LeaveCriticalSection(&s->lock);
        if (c == NULL) { /* the forwarder's EOF, after everything queued before it */
            if (!s->udp) {
                shutdown(s->sock, SD_SEND);
                half_done(s, 0);
            }
            break;
        }
        if (s->udp) {
            send(s->sock, (const char *)c->data, (int)c->length, 0); /* a datagram may be lost */
        } else if (!send_all(s, c->data, c->length)) {
            HeapFree(GetProcessHeap(), 0, c);
            finish(s, C_RESET, "connection reset");
            break;
        } else {
            unsigned char increment[4];
            EnterCriticalSection(&s->lock);
            s->window += c->length;
            LeaveCriticalSection(&s->lock);
            put32(increment, c->length);
            emit(F_WINDOW, s->id, increment, 4);
        }
        HeapFree(GetProcessHeap(), 0, c);
    }
    release(s);
    return 0;
}

static stream *lookup(DWORD id) {
    stream *found = NULL;
    int i;
    EnterCriticalSection(&table_lock);
    for (i = 0; i < MAX_STREAMS; i++) {
        if (table[i] != NULL && table[i]->id == id) {
            found = table[i];
            InterlockedIncrement(&found->refs);
            break;
        }
    }
    LeaveCriticalSection(&table_lock);
    return found;
}

static int host_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == ':' || c == '%';
}

static void open_stream(DWORD id, const unsigned char *p, DWORD n) {
    DWORD port, i, host_length;
    int slot = -1;
    stream *s;
    if (n < 4) {
        protocol_error("short OPEN");
    }
    port = ((DWORD)p[1] << 8) | p[2];
    host_length = n - 3;
    if ((p[0] != 6 && p[0] != 17) || port == 0 || host_length > 253) {
        protocol_error("invalid OPEN");
    }
    for (i = 0; i < host_length; i++) {
        if (!host_char(p[3 + i])) {
            protocol_error("invalid OPEN");
        }
    }
    s = HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, sizeof(stream));
    if (s == NULL) {
        emit(F_CLOSE, id, "\x04out of memory", 14);
        return;
    }
    s->id = id;
    s->udp = p[0] == 17;
    s->sock = INVALID_SOCKET;
    s->refs = 2; /* the table and the writer thread */
    s->credit = WINDOW;
    s->window = WINDOW;
    InitializeCriticalSection(&s->lock);
    InitializeConditionVariable(&s->changed);
    CopyMemory(s->host, p + 3, host_length);
    s->host[host_length] = '\0';
    {
        char digits[5];
        DWORD count = 0;
        do {
            digits[count++] = (char)('0' + port % 10);
            port /= 10;
        } while (port > 0);
        for (i = 0; i < count; i++) {
            s->port[i] = digits[count - 1 - i];
        }
        s->port[count] = '\0';
    }
    EnterCriticalSection(&table_lock);
    for (i = 0; i < MAX_STREAMS; i++) {
        if (table[i] != NULL && table[i]->id == id) {
            protocol_error("stream id in use");
        }
        if (table[i] == NULL && slot < 0) {
            slot = (int)i;
        }
    }
    if (slot >= 0) {
        table[slot] = s;
    }
    LeaveCriticalSection(&table_lock);
    if (slot < 0) {
        emit(F_CLOSE, id, "\x04too many streams", 17);
        DeleteCriticalSection(&s->lock);
        HeapFree(GetProcessHeap(), 0, s);
        return;
    }
    if (!start_thread(stream_writer, s)) {
        finish(s, C_RESET, "cannot start a thread");
        release(s);
        return;
    }
}

static void handle_frame(int type, DWORD id, const unsigned char *p, DWORD n) {
    stream *s;
    DWORD increment = 0;
    if (id == 0) {
        protocol_error("stream 0");
    }
    if (type == F_OPEN) {
        open_stream(id, p, n);
        return;
    }
    /* Check the frame's shape before looking the stream up: a frame for an ended stream is dropped,
       but a malformed one never is. */
    if (type == F_EOF && n != 0) {
        protocol_error("EOF with a payload");
    }
    if (type == F_CLOSE && (n < 1 || n > 257 || p[0] > C_ABORTED)) {
        protocol_error("malformed CLOSE");
    }
    if (type == F_WINDOW) {
        if (n != 4) {
            protocol_error("malformed WINDOW");
        }
        increment = get32(p);
        if (increment < 1 || increment > (DWORD)MAX_WINDOW) {
            protocol_error("WINDOW out of range");
        }
    }
    s = lookup(id);
    if (s == NULL) {
        return;
    }
    if (type == F_DATA) {
        EnterCriticalSection(&s->lock);
        if (!s->udp) {
            if ((LONGLONG)n > s->window) {
                protocol_error("DATA beyond the window");
            }
            s->window -= n;
        }
        if ((n > 0 || s->udp) && !(s->udp && s->queued >= MAX_QUEUED_DATAGRAMS)) {
            chunk *c = HeapAlloc(GetProcessHeap(), 0, sizeof(chunk) + n);
            if (c != NULL) {
                c->next = NULL;
                c->length = n;
                CopyMemory(c->data, p, n);
                if (s->tail != NULL) {
                    s->tail->next = c;
                } else {
                    s->head = c;
                }
                s->tail = c;
                s->queued++;
                WakeAllConditionVariable(&s->changed);
            }
        }
        LeaveCriticalSection(&s->lock);
    } else if (type == F_EOF) {
        EnterCriticalSection(&s->lock);
        s->eof_queued = 1;
        WakeAllConditionVariable(&s->changed);
        LeaveCriticalSection(&s->lock);
    } else if (type == F_CLOSE) {
        finish(s, -1, NULL);
    } else if (type == F_WINDOW) {
        EnterCriticalSection(&s->lock);
        s->credit += increment;
        if (s->credit > MAX_WINDOW) {
            protocol_error("window overflow");
        }
        WakeAllConditionVariable(&s->changed);
        LeaveCriticalSection(&s->lock);
    }
    release(s);
}

int run_mux(void) {
    WSADATA wsa;
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    DWORD have = 0;
    InitializeCriticalSection(&out_lock);
    InitializeCriticalSection(&table_lock);
    InitializeCriticalSection(&pool_lock);
    InitializeConditionVariable(&pool_wake);
    out_handle = GetStdHandle(STD_OUTPUT_HANDLE);
    if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
        HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
        write_handle(err, "kwin-relay: Winsock start-up failed\n", 36);
        return 7;
    }
    emit(F_HELLO, 0, "kwin-mux 1", 10);
    for (;;) {
        DWORD got = 0, offset = 0;
        if (!ReadFile(in, input + have, INPUT_SIZE - have, &got, NULL) || got == 0) {
            break;
        }
        have += got;
        while (have - offset >= HEADER) {
            int type = input[offset];
            DWORD id = get32(input + offset + 1), length = get32(input + offset + 5);
            if (type != F_OPEN && type != F_DATA && type != F_EOF && type != F_CLOSE && type != F_WINDOW) {
                protocol_error("unexpected frame type");
            }
            if (length > MAX_PAYLOAD) {
                protocol_error("frame too long");
            }
            if (have - offset - HEADER < length) {
                break;
            }
            handle_frame(type, id, input + offset + HEADER, length);
            offset += HEADER + length;
        }
        MoveMemory(input, input + offset, have - offset);
        have -= offset;
    }
    if (have != 0) {
        protocol_error("truncated frame");
    }
    ExitProcess(0);
    return 0;
}
