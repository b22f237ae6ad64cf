/*
 * kwin-relay: connect to HOST PORT and pump bytes between stdin/stdout and the socket.
 *
 * Used by `kubectl win port-forward` inside Windows containers that lack wincat and PowerShell.
 * Binary-safe (raw handles, no console translation). Half-close both ways: stdin EOF shuts down
 * the socket's send side and keeps reading; socket EOF closes stdout and exits.
 *
 * `kwin-relay --mux` runs the multiplexing relay instead (mux.c): one process, many connections.
 *
 * Exit codes say what failed, so the forwarder can print one precise line:
 *   0 done, 2 usage, 3 name resolution failed, 4 connection refused,
 *   5 connect failed otherwise (unreachable, timed out), 6 I/O error after connecting,
 *   7 Winsock start-up failed, 8 a malformed frame (--mux).
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include "mux.h"

#define RELAY_VERSION "kwin-relay 2"
#define BUFFER_SIZE (256 * 1024)

enum {
    EXIT_DONE = 0, EXIT_USAGE = 2, EXIT_RESOLVE = 3, EXIT_REFUSED = 4,
    EXIT_CONNECT = 5, EXIT_IO = 6, EXIT_WINSOCK = 7
};

static SOCKET relay_socket = INVALID_SOCKET;
static char stdin_buffer[BUFFER_SIZE];
static char socket_buffer[BUFFER_SIZE];

static void write_stderr(const char *text) {
    DWORD written;
    HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
    if (err != INVALID_HANDLE_VALUE && err != NULL) {
        WriteFile(err, text, (DWORD)lstrlenA(text), &written, NULL);
    }
}

static int write_all(HANDLE handle, const char *data, DWORD length) {
    while (length > 0) {
        DWORD written = 0;
        if (!WriteFile(handle, data, length, &written, NULL) || written == 0) {
            return 0;
        }
        data += written;
        length -= written;
    }
    return 1;
}

static int send_all(const char *data, int length) {
    while (length > 0) {
        int sent = send(relay_socket, data, length, 0);
        if (sent == SOCKET_ERROR) {
            return 0;
        }
        data += sent;
        length -= sent;
    }
    return 1;
}

/* Argument checks repeat the plugin's validation: a host name or address and a decimal port. */
static int valid_host(const char *host) {
    int length = 0;
    if (*host == '\0') {
        return 0;
    }
    for (; *host; host++, length++) {
        char c = *host;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == ':' || c == '%';
        if (!ok || length > 253) {
            return 0;
        }
    }
    return 1;
}

static int valid_port(const char *port) {
    long value = 0;
    int digits = 0;
    for (; *port; port++, digits++) {
        if (*port < '0' || *port > '9' || digits >= 5) {
            return 0;
        }
        value = value * 10 + (*port - '0');
    }
    return digits > 0 && value >= 1 && value <= 65535;
}

/* stdin -> socket; on EOF shut down the send side so the server sees a FIN and can still answer. */
static DWORD WINAPI pump_stdin(LPVOID unused) {
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    (void)unused;
    for (;;) {
        DWORD got = 0;
        if (!ReadFile(in, stdin_buffer, BUFFER_SIZE, &got, NULL) || got == 0) {
            break;
        }
        if (!send_all(stdin_buffer, (int)got)) {
            return 1;
        }
    }
    shutdown(relay_socket, SD_SEND);
    return 0;
}

static int connect_to(const char *host, const char *port) {
    struct addrinfo hints, *found = NULL, *candidate;
    int last_error = 0;
    ZeroMemory(&hints, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    if (getaddrinfo(host, port, &hints, &found) != 0 || found == NULL) {
        write_stderr("kwin-relay: cannot resolve host\n");
        return EXIT_RESOLVE;
    }
    for (candidate = found; candidate != NULL; candidate = candidate->ai_next) {
        SOCKET s = socket(candidate->ai_family, candidate->ai_socktype, candidate->ai_protocol);
        if (s == INVALID_SOCKET) {
            last_error = WSAGetLastError();
            continue;
        }
        if (connect(s, candidate->ai_addr, (int)candidate->ai_addrlen) == 0) {
            relay_socket = s;
            break;
        }
        last_error = WSAGetLastError();
        closesocket(s);
    }
    freeaddrinfo(found);
    if (relay_socket == INVALID_SOCKET) {
        if (last_error == WSAECONNREFUSED) {
            write_stderr("kwin-relay: connection refused\n");
            return EXIT_REFUSED;
        }
        write_stderr("kwin-relay: connect failed\n");
        return EXIT_CONNECT;
    }
    {
        BOOL on = TRUE;
        setsockopt(relay_socket, IPPROTO_TCP, TCP_NODELAY, (const char *)&on, sizeof(on));
    }
    return EXIT_DONE;
}

int main(int argc, char **argv) {
    WSADATA wsa;
    HANDLE out;
    HANDLE reader;
    int status;

    if (argc == 2 && lstrcmpA(argv[1], "--version") == 0) {
        out = GetStdHandle(STD_OUTPUT_HANDLE);
        write_all(out, RELAY_VERSION "\n", (DWORD)lstrlenA(RELAY_VERSION "\n"));
        return EXIT_DONE;
    }
    if (argc == 2 && lstrcmpA(argv[1], "--mux") == 0) {
        return run_mux();
    }
    if (argc != 3 || !valid_host(argv[1]) || !valid_port(argv[2])) {
        write_stderr("usage: kwin-relay HOST PORT\n");
        return EXIT_USAGE;
    }
    if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
        write_stderr("kwin-relay: Winsock start-up failed\n");
        return EXIT_WINSOCK;
    }
    status = connect_to(argv[1], argv[2]);
    if (status != EXIT_DONE) {
        WSACleanup();
        return status;
    }

    reader = CreateThread(NULL, 0, pump_stdin, NULL, 0, NULL);
    if (reader == NULL) {
        write_stderr("kwin-relay: cannot start the stdin thread\n");
        return EXIT_IO;
    }

    /* socket -> stdout, on this thread; the server closing ends the relay. */
    out = GetStdHandle(STD_OUTPUT_HANDLE);
    status = EXIT_DONE;
    for (;;) {
        int got = recv(relay_socket, socket_buffer, BUFFER_SIZE, 0);
        if (got == 0) {
            break;
        }
        if (got == SOCKET_ERROR) {
            write_stderr("kwin-relay: connection reset\n");
            status = EXIT_IO;
            break;
        }
        if (!write_all(out, socket_buffer, (DWORD)got)) {
            status = EXIT_IO;
            break;
        }
    }
    FlushFileBuffers(out);
    CloseHandle(out);
    closesocket(relay_socket);
    /* Do not wait for a stdin read that may never end; ExitProcess ends it. */
    ExitProcess((UINT)status);
    return status;
}
