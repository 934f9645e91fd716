/*
 * The power-loss harness's recorder (docs/reliability.md, "Power loss"; issue #14).
 *
 * An LD_PRELOAD shim that logs every file-system operation a questbak run makes on the files
 * under one directory, with the bytes it writes, so that the replayer
 * (Sources/QuestBakTestSupport/PowerLoss) can rebuild every state a power loss could leave.
 *
 * Why C, and why here: interposing libc needs a shared object with unmangled symbols, which
 * SwiftPM cannot build from a Swift target, and a C target in Sources/ would be linked into the
 * test bundle, where these symbols would interpose the test process itself. So it lives outside
 * Sources/ and the harness (or `make crash-recorder`) builds it with
 *   cc -shared -fPIC -O2 -o .build/crash-recorder.so Tools/crash-recorder/recorder.c -ldl
 *
 * Environment: CRASH_RECORDER_DIR (an absolute directory, symlinks resolved: only what happens
 * under it is logged) and CRASH_RECORDER_LOG (the log; the written bytes go to LOG.data).
 *
 * What is intercepted, found with `strace -f` and `nm -D` on questbak, Foundation, libsqlite3 and
 * libarchive: open/open64/openat/openat64 and their _FORTIFY_SOURCE forms, creat/creat64,
 * mkstemp/mkostemp/mkstemps (glibc opens those internally, past any interposition),
 * write/pwrite/pwrite64/writev/pwritev, sendfile/sendfile64 and copy_file_range (Foundation's
 * copyItem uses sendfile), ftruncate/ftruncate64/truncate, fallocate/posix_fallocate,
 * fsync/fdatasync (on files and on directories), rename/renameat/renameat2, link/linkat,
 * unlink/unlinkat, mkdir/mkdirat, rmdir, dup/dup2/dup3 and close. Not modelled: SQLite's -shm,
 * which it writes through mmap: a connection that finds no other rebuilds it from the WAL, so
 * its bytes never decide what a store holds (the self-check skips its content). Anything else
 * that bypassed the shim (a raw syscall, a stdio stream) would show as a difference between the
 * replayed log and the directory, which the harness checks after every recording.
 *
 * The log, one operation a line, fields separated by tabs. A file is named by an id, given when
 * it is first seen (an inode may be reused after an unlink, an id is not); directories and
 * directory entries by their path relative to CRASH_RECORDER_DIR.
 *   E id path            a file that existed when the process started
 *   C id path            a file created (open with O_CREAT of a missing name, mkstemp)
 *   W id offset length dataoffset   bytes written (dataoffset: where in LOG.data)
 *   T id size            truncated or extended to size
 *   S id                 fsync or fdatasync of a file
 *   Z path               fsync of a directory
 *   R from to            rename (a file renamed out of the directory is logged as an unlink,
 *                        one renamed in as created with its bytes)
 *   L from to            link
 *   U path               unlink
 *   M path / D path      mkdir / rmdir
 *   K id                 close (informational)
 *   ? text               something the replayer cannot model (it fails the recording)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 65536
#define MAX_INODES 8192

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static char root[PATH_MAX];
static size_t root_length;
static int enabled;
static int log_fd = -1;
static int data_fd = -1;
static long long data_offset;
static int next_id = 1;

/* fd → file id (0: untracked) or, for a directory under the root, its relative path. */
static int fd_file[MAX_FDS];
static char *fd_directory[MAX_FDS];

static struct {
    dev_t device;
    ino_t inode;
    int id;
} inodes[MAX_INODES];
static int inode_count;

#define RESOLVE(name)                                                   \
    do {                                                                \
        if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name);        \
    } while (0)

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_mkstemp)(char *);
static int (*real_mkstemp64)(char *);
static int (*real_mkostemp)(char *, int);
static int (*real_mkstemps)(char *, int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_sendfile)(int, int, off_t *, size_t);
static ssize_t (*real_sendfile64)(int, int, off_t *, size_t);
static ssize_t (*real_copy_file_range)(int, off_t *, int, off_t *, size_t, unsigned int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_truncate)(const char *, off_t);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_posix_fallocate)(int, off_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_renameat2)(int, const char *, int, const char *, unsigned int);
static int (*real_link)(const char *, const char *);
static int (*real_linkat)(int, const char *, int, const char *, int);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_mkdirat)(int, const char *, mode_t);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_close)(int);

static void write_all(int fd, const void *bytes, size_t count) {
    RESOLVE(write);
    const char *cursor = bytes;
    while (count > 0) {
        ssize_t written = real_write(fd, cursor, count);
        if (written < 0) {
            if (errno == EINTR) continue;
            return;
        }
        cursor += written;
        count -= (size_t)written;
    }
}

static void log_line(const char *format, ...) {
    char line[3 * PATH_MAX];
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(line, sizeof line - 1, format, arguments);
    va_end(arguments);
    if (length < 0) return;
    if ((size_t)length > sizeof line - 2) length = (int)sizeof line - 2;
    line[length++] = '\n';
    int saved = errno;
    write_all(log_fd, line, (size_t)length);
    errno = saved;
}

/* The absolute, lexically normalized form of `path` as seen from `directory_fd`. */
static int absolute(int directory_fd, const char *path, char *out) {
    char joined[2 * PATH_MAX];
    if (!path) return 0;
    if (path[0] == '/') {
        snprintf(joined, sizeof joined, "%s", path);
    } else {
        char base[PATH_MAX];
        if (directory_fd == AT_FDCWD) {
            if (!getcwd(base, sizeof base)) return 0;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", directory_fd);
            ssize_t length = readlink(link, base, sizeof base - 1);
            if (length < 0) return 0;
            base[length] = 0;
        }
        snprintf(joined, sizeof joined, "%s/%s", base, path);
    }
    /* Collapse "//", "." and ".." without following symlinks (the root is given resolved). */
    char *parts[PATH_MAX / 2];
    int count = 0;
    char *save = NULL;
    for (char *part = strtok_r(joined, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0) continue;
        if (strcmp(part, "..") == 0) {
            if (count > 0) count--;
            continue;
        }
        parts[count++] = part;
    }
    size_t used = 0;
    out[0] = 0;
    for (int index = 0; index < count; index++) {
        int written = snprintf(out + used, PATH_MAX - used, "/%s", parts[index]);
        if (written < 0 || (size_t)written >= PATH_MAX - used) return 0;
        used += (size_t)written;
    }
    if (used == 0) snprintf(out, PATH_MAX, "/");
    return 1;
}

/* The path relative to the root ("." for the root itself), or NULL when outside it. */
static const char *relative(const char *absolute_path) {
    if (strncmp(absolute_path, root, root_length) != 0) return NULL;
    if (absolute_path[root_length] == 0) return ".";
    if (absolute_path[root_length] != '/') return NULL;
    return absolute_path + root_length + 1;
}

static int id_of_inode(dev_t device, ino_t inode) {
    for (int index = 0; index < inode_count; index++) {
        if (inodes[index].device == device && inodes[index].inode == inode) return inodes[index].id;
    }
    return 0;
}

static int new_id(dev_t device, ino_t inode) {
    int id = next_id++;
    for (int index = 0; index < inode_count; index++) {
        if (inodes[index].device == device && inodes[index].inode == inode) {
            inodes[index].id = id;
            return id;
        }
    }
    if (inode_count < MAX_INODES) {
        inodes[inode_count].device = device;
        inodes[inode_count].inode = inode;
        inodes[inode_count].id = id;
        inode_count++;
    }
    return id;
}

static void scan(const char *directory) {
    DIR *listing = opendir(directory);
    if (!listing) return;
    struct dirent *entry;
    while ((entry = readdir(listing))) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
        struct stat status;
        if (lstat(path, &status) != 0) continue;
        if (S_ISDIR(status.st_mode)) {
            scan(path);
        } else if (S_ISREG(status.st_mode)) {
            log_line("E\t%d\t%s", new_id(status.st_dev, status.st_ino), relative(path));
        }
    }
    closedir(listing);
}

__attribute__((constructor)) static void start(void) {
    const char *directory = getenv("CRASH_RECORDER_DIR");
    const char *log_path = getenv("CRASH_RECORDER_LOG");
    if (!directory || !log_path || !realpath(directory, root)) return;
    root_length = strlen(root);
    RESOLVE(open);
    log_fd = real_open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    char data_path[PATH_MAX];
    snprintf(data_path, sizeof data_path, "%s.data", log_path);
    data_fd = real_open(data_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0 || data_fd < 0) return;
    pthread_mutex_lock(&lock);
    scan(root);
    enabled = 1;
    pthread_mutex_unlock(&lock);
}

static void forget(int fd) {
    if (fd < 0 || fd >= MAX_FDS) return;
    fd_file[fd] = 0;
    free(fd_directory[fd]);
    fd_directory[fd] = NULL;
}

/* After a successful open of `path`: start tracking `fd` and log what the open did. */
static void opened(int fd, const char *path, int flags, int existed) {
    if (fd < 0 || fd >= MAX_FDS) return;
    forget(fd);
    const char *name = relative(path);
    if (!name) return;
    struct stat status;
    if (fstat(fd, &status) != 0) return;
    if (S_ISDIR(status.st_mode)) {
        fd_directory[fd] = strdup(name);
        return;
    }
    if (!S_ISREG(status.st_mode)) return;
    int id;
    if (!existed) {
        id = new_id(status.st_dev, status.st_ino);
        log_line("C\t%d\t%s", id, name);
    } else {
        id = id_of_inode(status.st_dev, status.st_ino);
        if (!id) {
            /* Not there at the start, not created by this process: another process made it. */
            id = new_id(status.st_dev, status.st_ino);
            log_line("?\tfile %s appeared from outside the recorded process", name);
        }
        if (flags & O_TRUNC) log_line("T\t%d\t0", id);
    }
    fd_file[fd] = id;
}

static int exists(const char *path) {
    struct stat status;
    return lstat(path, &status) == 0;
}

static void logged_bytes(int fd, long long offset, const void *bytes, size_t count) {
    if (count == 0) return;
    log_line("W\t%d\t%lld\t%zu\t%lld", fd_file[fd], offset, count, data_offset);
    write_all(data_fd, bytes, count);
    data_offset += (long long)count;
}

static int tracked(int fd) { return enabled && fd >= 0 && fd < MAX_FDS && fd_file[fd] != 0; }

/* ---- opening ---- */

static int open_common(int directory_fd, const char *path, int flags, mode_t mode, int use_at, int large) {
    char full[PATH_MAX];
    int interesting = enabled && absolute(directory_fd, path, full) && relative(full);
    if (interesting) pthread_mutex_lock(&lock);
    int existed = interesting ? exists(full) : 1;
    int fd;
    if (use_at) {
        if (large) {
            RESOLVE(openat64);
            fd = real_openat64(directory_fd, path, flags, mode);
        } else {
            RESOLVE(openat);
            fd = real_openat(directory_fd, path, flags, mode);
        }
    } else if (large) {
        RESOLVE(open64);
        fd = real_open64(path, flags, mode);
    } else {
        RESOLVE(open);
        fd = real_open(path, flags, mode);
    }
    if (interesting) {
        int saved = errno;
        if (fd >= 0) opened(fd, full, flags, existed);
        errno = saved;
        pthread_mutex_unlock(&lock);
    } else if (fd >= 0 && fd < MAX_FDS && enabled) {
        pthread_mutex_lock(&lock);
        forget(fd);
        pthread_mutex_unlock(&lock);
    }
    return fd;
}

#define MODE_ARGUMENT(flags)                                    \
    mode_t mode = 0;                                            \
    if ((flags) & (O_CREAT | __O_TMPFILE)) {                    \
        va_list arguments;                                      \
        va_start(arguments, flags);                             \
        mode = (mode_t)va_arg(arguments, int);                  \
        va_end(arguments);                                      \
    }

int open(const char *path, int flags, ...) {
    MODE_ARGUMENT(flags)
    return open_common(AT_FDCWD, path, flags, mode, 0, 0);
}
int open64(const char *path, int flags, ...) {
    MODE_ARGUMENT(flags)
    return open_common(AT_FDCWD, path, flags, mode, 0, 1);
}
int openat(int directory_fd, const char *path, int flags, ...) {
    MODE_ARGUMENT(flags)
    return open_common(directory_fd, path, flags, mode, 1, 0);
}
int openat64(int directory_fd, const char *path, int flags, ...) {
    MODE_ARGUMENT(flags)
    return open_common(directory_fd, path, flags, mode, 1, 1);
}
int __open_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0, 0, 0); }
int __open64_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0, 0, 1); }
int __openat_2(int directory_fd, const char *path, int flags) { return open_common(directory_fd, path, flags, 0, 1, 0); }
int __openat64_2(int directory_fd, const char *path, int flags) { return open_common(directory_fd, path, flags, 0, 1, 1); }
int creat(const char *path, mode_t mode) { return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 0, 0); }
int creat64(const char *path, mode_t mode) { return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 0, 1); }

/* glibc's mkstemp family opens with its internal open, which no interposition sees. */
static int made_temporary(int fd, const char *template) {
    if (fd < 0 || !enabled) return fd;
    char full[PATH_MAX];
    if (!absolute(AT_FDCWD, template, full) || !relative(full)) return fd;
    int saved = errno;
    pthread_mutex_lock(&lock);
    opened(fd, full, O_CREAT | O_EXCL, 0);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return fd;
}
int mkstemp(char *template) {
    RESOLVE(mkstemp);
    return made_temporary(real_mkstemp(template), template);
}
int mkstemp64(char *template) {
    RESOLVE(mkstemp64);
    return made_temporary(real_mkstemp64(template), template);
}
int mkostemp(char *template, int flags) {
    RESOLVE(mkostemp);
    return made_temporary(real_mkostemp(template, flags), template);
}
int mkstemps(char *template, int suffix_length) {
    RESOLVE(mkstemps);
    return made_temporary(real_mkstemps(template, suffix_length), template);
}

/* ---- writing ---- */

ssize_t write(int fd, const void *bytes, size_t count) {
    RESOLVE(write);
    if (!tracked(fd)) return real_write(fd, bytes, count);
    pthread_mutex_lock(&lock);
    off_t before = lseek(fd, 0, SEEK_CUR);
    ssize_t written = real_write(fd, bytes, count);
    int saved = errno;
    if (written > 0) {
        /* O_APPEND writes at the end, whatever the position was. */
        off_t after = lseek(fd, 0, SEEK_CUR);
        logged_bytes(fd, after >= 0 ? (long long)(after - written) : (long long)before, bytes, (size_t)written);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return written;
}

static ssize_t positioned_write(ssize_t (*real)(int, const void *, size_t, off_t), int fd, const void *bytes, size_t count, off_t offset) {
    if (!tracked(fd)) return real(fd, bytes, count, offset);
    pthread_mutex_lock(&lock);
    ssize_t written = real(fd, bytes, count, offset);
    int saved = errno;
    if (written > 0) logged_bytes(fd, (long long)offset, bytes, (size_t)written);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return written;
}
ssize_t pwrite(int fd, const void *bytes, size_t count, off_t offset) {
    RESOLVE(pwrite);
    return positioned_write(real_pwrite, fd, bytes, count, offset);
}
ssize_t pwrite64(int fd, const void *bytes, size_t count, off_t offset) {
    RESOLVE(pwrite64);
    return positioned_write(real_pwrite64, fd, bytes, count, offset);
}

static void logged_vector(int fd, long long offset, const struct iovec *vector, int count, ssize_t written) {
    size_t left = (size_t)written;
    for (int index = 0; index < count && left > 0; index++) {
        size_t part = vector[index].iov_len < left ? vector[index].iov_len : left;
        logged_bytes(fd, offset, vector[index].iov_base, part);
        offset += (long long)part;
        left -= part;
    }
}
ssize_t writev(int fd, const struct iovec *vector, int count) {
    RESOLVE(writev);
    if (!tracked(fd)) return real_writev(fd, vector, count);
    pthread_mutex_lock(&lock);
    ssize_t written = real_writev(fd, vector, count);
    int saved = errno;
    if (written > 0) {
        off_t after = lseek(fd, 0, SEEK_CUR);
        logged_vector(fd, (long long)(after - written), vector, count, written);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return written;
}
ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
    RESOLVE(pwritev);
    if (!tracked(fd)) return real_pwritev(fd, vector, count, offset);
    pthread_mutex_lock(&lock);
    ssize_t written = real_pwritev(fd, vector, count, offset);
    int saved = errno;
    if (written > 0) logged_vector(fd, (long long)offset, vector, count, written);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return written;
}

/* Bytes copied in the kernel: read them back from the source to log them. */
static void logged_copy(int out, long long out_offset, int in, long long in_offset, ssize_t copied) {
    char *buffer = malloc((size_t)copied);
    if (!buffer) {
        log_line("?\tno memory to log a copy of %zd bytes", copied);
        return;
    }
    ssize_t got = pread(in, buffer, (size_t)copied, in_offset);
    if (got != copied) {
        log_line("?\tcould not read back a copy of %zd bytes", copied);
    } else {
        logged_bytes(out, out_offset, buffer, (size_t)copied);
    }
    free(buffer);
}
static ssize_t send_common(ssize_t (*real)(int, int, off_t *, size_t), int out, int in, off_t *offset, size_t count) {
    if (!tracked(out)) return real(out, in, offset, count);
    pthread_mutex_lock(&lock);
    off_t out_before = lseek(out, 0, SEEK_CUR);
    off_t in_before = offset ? *offset : lseek(in, 0, SEEK_CUR);
    ssize_t copied = real(out, in, offset, count);
    int saved = errno;
    if (copied > 0) logged_copy(out, (long long)out_before, in, (long long)in_before, copied);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return copied;
}
ssize_t sendfile(int out, int in, off_t *offset, size_t count) {
    RESOLVE(sendfile);
    return send_common(real_sendfile, out, in, offset, count);
}
ssize_t sendfile64(int out, int in, off_t *offset, size_t count) {
    RESOLVE(sendfile64);
    return send_common(real_sendfile64, out, in, offset, count);
}
ssize_t copy_file_range(int in, off_t *in_offset, int out, off_t *out_offset, size_t count, unsigned int flags) {
    RESOLVE(copy_file_range);
    if (!tracked(out)) return real_copy_file_range(in, in_offset, out, out_offset, count, flags);
    pthread_mutex_lock(&lock);
    off_t out_before = out_offset ? *out_offset : lseek(out, 0, SEEK_CUR);
    off_t in_before = in_offset ? *in_offset : lseek(in, 0, SEEK_CUR);
    ssize_t copied = real_copy_file_range(in, in_offset, out, out_offset, count, flags);
    int saved = errno;
    if (copied > 0) logged_copy(out, (long long)out_before, in, (long long)in_before, copied);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return copied;
}

static int sized(int (*real)(int, off_t), int fd, off_t size) {
    if (!tracked(fd)) return real(fd, size);
    pthread_mutex_lock(&lock);
    int result = real(fd, size);
    int saved = errno;
    if (result == 0) log_line("T\t%d\t%lld", fd_file[fd], (long long)size);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
int ftruncate(int fd, off_t size) {
    RESOLVE(ftruncate);
    return sized(real_ftruncate, fd, size);
}
int ftruncate64(int fd, off_t size) {
    RESOLVE(ftruncate64);
    return sized(real_ftruncate64, fd, size);
}
int truncate(const char *path, off_t size) {
    RESOLVE(truncate);
    char full[PATH_MAX];
    if (!enabled || !absolute(AT_FDCWD, path, full) || !relative(full)) return real_truncate(path, size);
    pthread_mutex_lock(&lock);
    int result = real_truncate(path, size);
    int saved = errno;
    struct stat status;
    if (result == 0 && stat(full, &status) == 0) log_line("T\t%d\t%lld", id_of_inode(status.st_dev, status.st_ino), (long long)size);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

/* An allocation that grows the file is, to a reader, an extension with zeros. */
static void allocated(int fd, long long end, int keep_size) {
    struct stat status;
    if (!keep_size && fstat(fd, &status) == 0 && status.st_size >= end) log_line("T\t%d\t%lld", fd_file[fd], (long long)status.st_size);
}
int fallocate(int fd, int mode, off_t offset, off_t length) {
    RESOLVE(fallocate);
    if (!tracked(fd)) return real_fallocate(fd, mode, offset, length);
    pthread_mutex_lock(&lock);
    int result = real_fallocate(fd, mode, offset, length);
    int saved = errno;
    if (result == 0) {
        if (mode & ~1) {
            log_line("?\tfallocate mode %d (punching or zeroing a range) is not modelled", mode);
        } else {
            allocated(fd, (long long)(offset + length), mode & 1);
        }
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
int posix_fallocate(int fd, off_t offset, off_t length) {
    RESOLVE(posix_fallocate);
    if (!tracked(fd)) return real_posix_fallocate(fd, offset, length);
    pthread_mutex_lock(&lock);
    int result = real_posix_fallocate(fd, offset, length);
    if (result == 0) allocated(fd, (long long)(offset + length), 0);
    pthread_mutex_unlock(&lock);
    return result;
}

/* ---- syncing ---- */

static int synced(int (*real)(int), int fd) {
    if (!enabled || fd < 0 || fd >= MAX_FDS || (!fd_file[fd] && !fd_directory[fd])) return real(fd);
    pthread_mutex_lock(&lock);
    int result = real(fd);
    int saved = errno;
    if (result == 0) {
        if (fd_file[fd]) {
            log_line("S\t%d", fd_file[fd]);
        } else {
            log_line("Z\t%s", fd_directory[fd]);
        }
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
int fsync(int fd) {
    RESOLVE(fsync);
    return synced(real_fsync, fd);
}
/* fdatasync also makes the size durable when a later read needs it, which is all the replay
   models of a file (no timestamps, no permissions). */
int fdatasync(int fd) {
    RESOLVE(fdatasync);
    return synced(real_fdatasync, fd);
}

/* ---- names ---- */

static int two_names(char type, int from_directory, const char *from, int to_directory, const char *to, int (*call)(void *), void *context) {
    char from_full[PATH_MAX] = "", to_full[PATH_MAX] = "";
    const char *from_name = enabled && absolute(from_directory, from, from_full) ? relative(from_full) : NULL;
    const char *to_name = enabled && absolute(to_directory, to, to_full) ? relative(to_full) : NULL;
    if (!from_name && !to_name) return call(context);
    pthread_mutex_lock(&lock);
    struct stat status;
    int source_known = lstat(from_full, &status) == 0 && S_ISREG(status.st_mode);
    int result = call(context);
    int saved = errno;
    if (result == 0) {
        if (from_name && to_name) {
            log_line("%c\t%s\t%s", type, from_name, to_name);
        } else if (to_name && source_known) {
            /* A file moved in from outside: to the replay, a new file with its bytes. */
            int fd;
            RESOLVE(open);
            if ((fd = real_open(to_full, O_RDONLY | O_CLOEXEC)) >= 0) {
                int id = new_id(status.st_dev, status.st_ino);
                log_line("C\t%d\t%s", id, to_name);
                fd_file[fd] = id;
                char buffer[65536];
                long long offset = 0;
                ssize_t got;
                while ((got = read(fd, buffer, sizeof buffer)) > 0) {
                    logged_bytes(fd, offset, buffer, (size_t)got);
                    offset += got;
                }
                fd_file[fd] = 0;
                RESOLVE(close);
                real_close(fd);
            }
        } else if (from_name && type == 'R') {
            log_line("U\t%s", from_name);
        }
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}

struct rename_call {
    int from_directory, to_directory;
    const char *from, *to;
    unsigned int flags;
    int kind;
};
static int do_rename(void *context) {
    struct rename_call *c = context;
    switch (c->kind) {
    case 0: RESOLVE(rename); return real_rename(c->from, c->to);
    case 1: RESOLVE(renameat); return real_renameat(c->from_directory, c->from, c->to_directory, c->to);
    case 2: RESOLVE(renameat2); return real_renameat2(c->from_directory, c->from, c->to_directory, c->to, c->flags);
    case 3: RESOLVE(link); return real_link(c->from, c->to);
    default: RESOLVE(linkat); return real_linkat(c->from_directory, c->from, c->to_directory, c->to, (int)c->flags);
    }
}
int rename(const char *from, const char *to) {
    struct rename_call c = {AT_FDCWD, AT_FDCWD, from, to, 0, 0};
    return two_names('R', AT_FDCWD, from, AT_FDCWD, to, do_rename, &c);
}
int renameat(int from_directory, const char *from, int to_directory, const char *to) {
    struct rename_call c = {from_directory, to_directory, from, to, 0, 1};
    return two_names('R', from_directory, from, to_directory, to, do_rename, &c);
}
int renameat2(int from_directory, const char *from, int to_directory, const char *to, unsigned int flags) {
    struct rename_call c = {from_directory, to_directory, from, to, flags, 2};
    if (flags & RENAME_EXCHANGE) {
        pthread_mutex_lock(&lock);
        if (enabled) log_line("?\trenameat2 with RENAME_EXCHANGE is not modelled");
        pthread_mutex_unlock(&lock);
    }
    return two_names('R', from_directory, from, to_directory, to, do_rename, &c);
}
int link(const char *from, const char *to) {
    struct rename_call c = {AT_FDCWD, AT_FDCWD, from, to, 0, 3};
    return two_names('L', AT_FDCWD, from, AT_FDCWD, to, do_rename, &c);
}
int linkat(int from_directory, const char *from, int to_directory, const char *to, int flags) {
    struct rename_call c = {from_directory, to_directory, from, to, (unsigned int)flags, 4};
    return two_names('L', from_directory, from, to_directory, to, do_rename, &c);
}

static int one_name(char type, int directory, const char *path, int result_of_call(int, const char *, int), int extra) {
    char full[PATH_MAX];
    const char *name = enabled && absolute(directory, path, full) ? relative(full) : NULL;
    if (!name) return result_of_call(directory, path, extra);
    pthread_mutex_lock(&lock);
    int result = result_of_call(directory, path, extra);
    int saved = errno;
    if (result == 0) log_line("%c\t%s", type, name);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
static int call_unlink(int directory, const char *path, int flags) {
    RESOLVE(unlinkat);
    return real_unlinkat(directory, path, flags);
}
static int call_mkdir(int directory, const char *path, int mode) {
    RESOLVE(mkdirat);
    return real_mkdirat(directory, path, (mode_t)mode);
}
int unlink(const char *path) { return one_name('U', AT_FDCWD, path, call_unlink, 0); }
int unlinkat(int directory, const char *path, int flags) {
    return one_name(flags & AT_REMOVEDIR ? 'D' : 'U', directory, path, call_unlink, flags);
}
int rmdir(const char *path) { return one_name('D', AT_FDCWD, path, call_unlink, AT_REMOVEDIR); }
int mkdir(const char *path, mode_t mode) { return one_name('M', AT_FDCWD, path, call_mkdir, (int)mode); }
int mkdirat(int directory, const char *path, mode_t mode) { return one_name('M', directory, path, call_mkdir, (int)mode); }

/* ---- descriptors ---- */

static void duplicated(int from, int to) {
    if (!enabled || from < 0 || from >= MAX_FDS || to < 0 || to >= MAX_FDS || from == to) return;
    pthread_mutex_lock(&lock);
    forget(to);
    fd_file[to] = fd_file[from];
    if (fd_directory[from]) fd_directory[to] = strdup(fd_directory[from]);
    pthread_mutex_unlock(&lock);
}
int dup(int fd) {
    RESOLVE(dup);
    int copy = real_dup(fd);
    duplicated(fd, copy);
    return copy;
}
int dup2(int fd, int to) {
    RESOLVE(dup2);
    int copy = real_dup2(fd, to);
    duplicated(fd, copy);
    return copy;
}
int dup3(int fd, int to, int flags) {
    RESOLVE(dup3);
    int copy = real_dup3(fd, to, flags);
    duplicated(fd, copy);
    return copy;
}

int close(int fd) {
    RESOLVE(close);
    if (!enabled || fd < 0 || fd >= MAX_FDS || (!fd_file[fd] && !fd_directory[fd])) return real_close(fd);
    pthread_mutex_lock(&lock);
    if (fd_file[fd]) log_line("K\t%d", fd_file[fd]);
    forget(fd);
    int result = real_close(fd);
    int saved = errno;
    pthread_mutex_unlock(&lock);
    errno = saved;
    return result;
}
