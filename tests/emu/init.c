// init.c - PID 1 of the AVX-512 emulator harness (./build.sh avx512emu).
// The initramfs holds this program as /init and the test programs under
// /t; each line of /t/list is "program [args...]". Runs them in order with
// their output on the serial console, then powers the machine off, which
// ends the emulator.
//
// build: cc -static -O2 tests/emu/init.c -o init
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// The kernel gives PID 1 a console only if the initramfs has /dev/console;
// ours has no device nodes (cpio without root), so it opens the serial port
// from devtmpfs itself.
static void console(void) {
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    mount("proc", "/proc", "proc", 0, NULL);
    int fd = open("/dev/ttyS0", O_RDWR | O_NOCTTY);
    if (fd < 0) fd = open("/dev/console", O_RDWR | O_NOCTTY);
    if (fd < 0) return;
    dup2(fd, 0); dup2(fd, 1); dup2(fd, 2);
    if (fd > 2) close(fd);
}

static int run(char * line) {
    char * argv[16];
    int argc = 0;
    for (char * tok = strtok(line, " \t\n"); tok != NULL && argc < 15; tok = strtok(NULL, " \t\n")) argv[argc++] = tok;
    argv[argc] = NULL;
    if (argc == 0) return 0;
    printf("EMU-RUN %s\n", argv[0]);
    fflush(stdout);
    const double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        chdir("/t");
        execv(argv[0], argv);
        perror("execv");
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    const int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    printf("EMU-END %s rc=%d %.1fs (guest clock)\n", argv[0], rc, now() - t0);
    fflush(stdout);
    return rc != 0;
}

int main(void) {
    console();
    setenv("PATH", "/t", 1);
    printf("EMU-BOOTED\n");
    fflush(stdout);
    FILE * cpu = fopen("/proc/cpuinfo", "r");
    char line[4096];
    while (cpu != NULL && fgets(line, sizeof(line), cpu) != NULL) {
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "flags", 5) == 0) fputs(line, stdout);
    }
    if (cpu != NULL) fclose(cpu);
    int fails = 0;
    FILE * list = fopen("/t/list", "r");
    while (list != NULL && fgets(line, sizeof(line), list) != NULL) fails += run(line);
    printf("EMU-DONE fails=%d\n", fails);
    fflush(stdout);
    // the serial port sends what the tty holds after write() returns: wait
    // for it, or the power-off cuts the last lines
    tcdrain(1);
    sleep(1);
    sync();
    reboot(RB_POWER_OFF);
    for (;;) pause();
}
