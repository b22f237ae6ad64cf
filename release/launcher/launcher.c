/*
 * kubectl-win.exe / kubectl_complete-win.exe: start the bundled Windows CPython on our module.
 *
 * Runs  <install>\python\python.exe -I -X utf8 -m MODULE <the rest of our command line, verbatim>
 * so python.exe's own start-up code splits the arguments exactly as it would have split ours
 * (Windows quoting rules: nothing is re-quoted here). -I: isolated mode (no PYTHON* variables, no
 * user site); -X utf8: text written to pipes and files is UTF-8.
 *
 * <install> is the folder this executable is in; when krew copied us into its bin folder (it
 * copies when the user may not create symbolic links) or linked us there, it is the plugin's
 * store folder: the link target, else %KREW_ROOT%\store\PLUGIN\VERSION\kubectl-win next to bin.
 *
 * The child shares our console, so it gets Ctrl-C and Ctrl-Break itself; we ignore them and wait.
 * On console close, log-off or shut-down we wait for the child's clean-up (Windows ends us both
 * when its time-out expires). The exit code is the child's.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#ifndef MODULE
#define MODULE L"kubectl_win"
#endif
#ifndef PLUGIN
#define PLUGIN L"win"
#endif
#ifndef VERSION
#define VERSION L"v0.0.0"
#endif

#define PATH_CHARS 32768

static HANDLE child = NULL;
static wchar_t here[PATH_CHARS];
static wchar_t python[PATH_CHARS];

static void say(const char *text) {
    DWORD written;
    HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
    if (err != INVALID_HANDLE_VALUE && err != NULL) {
        WriteFile(err, text, (DWORD)lstrlenA(text), &written, NULL);
    }
}

static BOOL WINAPI on_console_event(DWORD event) {
    if (event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT) {
        return TRUE; /* the child got it too, and decides */
    }
    if (child != NULL) {
        WaitForSingleObject(child, INFINITE);
    }
    return TRUE;
}

/* Cut `path` after its last backslash (keeping the backslash). */
static void dirname_of(wchar_t *path) {
    wchar_t *last = NULL;
    for (wchar_t *c = path; *c; c++) {
        if (*c == L'\\' || *c == L'/') {
            last = c;
        }
    }
    if (last != NULL) {
        last[1] = 0;
    }
}

static int try_install(const wchar_t *folder, const wchar_t *relative) {
    if (lstrlenW(folder) + lstrlenW(relative) + 32 >= PATH_CHARS) {
        return 0;
    }
    lstrcpyW(python, folder);
    lstrcatW(python, relative);
    lstrcatW(python, L"python\\python.exe");
    return GetFileAttributesW(python) != INVALID_FILE_ATTRIBUTES;
}

static int find_python(void) {
    DWORD length = GetModuleFileNameW(NULL, here, PATH_CHARS);
    if (length == 0 || length >= PATH_CHARS) {
        return 0;
    }
    wchar_t self[PATH_CHARS];
    lstrcpyW(self, here);
    dirname_of(here);
    if (try_install(here, L"")) {
        return 1;
    }
    /* A symbolic link: the folder of its target. */
    HANDLE file = CreateFileW(self, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, NULL);
    if (file != INVALID_HANDLE_VALUE) {
        wchar_t target[PATH_CHARS];
        DWORD got = GetFinalPathNameByHandleW(file, target, PATH_CHARS, 0);
        CloseHandle(file);
        if (got > 0 && got < PATH_CHARS) {
            dirname_of(target);
            if (try_install(target, L"")) {
                return 1;
            }
        }
    }
    /* A copy in %KREW_ROOT%\bin. */
    return try_install(here, L"..\\store\\" PLUGIN L"\\" VERSION L"\\kubectl-win\\");
}

/* Our arguments as typed: the command line after the program name (CRT rules for argv[0]). */
static const wchar_t *arguments(void) {
    const wchar_t *c = GetCommandLineW();
    if (*c == L'"') {
        c++;
        while (*c && *c != L'"') {
            c++;
        }
        if (*c) {
            c++;
        }
    } else {
        while (*c && *c != L' ' && *c != L'\t') {
            c++;
        }
    }
    while (*c == L' ' || *c == L'\t') {
        c++;
    }
    return c;
}

int main(void) {
    if (!find_python()) {
        say("kubectl-win: the bundled Python (python\\python.exe) is missing next to this program; "
            "reinstall the plugin\n");
        return 127;
    }
    const wchar_t *rest = arguments();
    static const wchar_t options[] = L"\" -I -X utf8 -m " MODULE L" ";
    size_t size = (size_t)lstrlenW(python) + (size_t)lstrlenW(rest) + sizeof(options) / sizeof(wchar_t) + 4;
    wchar_t *command = HeapAlloc(GetProcessHeap(), 0, size * sizeof(wchar_t));
    if (command == NULL) {
        say("kubectl-win: out of memory\n");
        return 127;
    }
    lstrcpyW(command, L"\"");
    lstrcatW(command, python);
    lstrcatW(command, options);
    lstrcatW(command, rest);

    SetConsoleCtrlHandler(on_console_event, TRUE);
    STARTUPINFOW startup;
    PROCESS_INFORMATION process;
    ZeroMemory(&startup, sizeof(startup));
    startup.cb = sizeof(startup);
    if (!CreateProcessW(python, command, NULL, NULL, TRUE, 0, NULL, NULL, &startup, &process)) {
        say("kubectl-win: cannot start the bundled Python\n");
        return 127;
    }
    child = process.hProcess;
    CloseHandle(process.hThread);
    WaitForSingleObject(process.hProcess, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(process.hProcess, &code);
    return (int)code;
}
