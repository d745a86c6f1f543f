#define _GNU_SOURCE
#include <signal.h>
#include "CSystemShims.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

const unsigned int PKG_RENAME_NOREPLACE = RENAME_NOREPLACE;
const unsigned int PKG_RENAME_EXCHANGE = RENAME_EXCHANGE;
const int PKG_O_TMPFILE = O_TMPFILE;
const int PKG_O_DIRECTORY = O_DIRECTORY;
const int PKG_O_NOFOLLOW = O_NOFOLLOW;
const int PKG_O_CLOEXEC = O_CLOEXEC;
const int PKG_O_PATH = O_PATH;
const int PKG_AT_FDCWD = AT_FDCWD;
const int PKG_AT_SYMLINK_NOFOLLOW = AT_SYMLINK_NOFOLLOW;
const int PKG_AT_REMOVEDIR = AT_REMOVEDIR;
const int PKG_AT_EMPTY_PATH = AT_EMPTY_PATH;
const int PKG_AT_SYMLINK_FOLLOW = AT_SYMLINK_FOLLOW;

int pkg_openat(int dirfd, const char *path, int flags, unsigned int mode) {
    return openat(dirfd, path, flags, (mode_t)mode);
}

int pkg_openat_nofollow(int dirfd, const char *path, int flags, unsigned int mode, int beneath) {
    static int openat2_missing = 0;
    if (!__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
        struct open_how how = {0};
        how.flags = (unsigned long long)flags;
        int creates = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;  // O_TMPFILE includes O_DIRECTORY
        how.mode = creates ? mode : 0;
        how.resolve = RESOLVE_NO_SYMLINKS | (beneath ? RESOLVE_BENEATH : 0);
        long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
        if (fd >= 0 || errno != ENOSYS) return (int)fd;
        __atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED);
    }
    return openat(dirfd, path, flags | O_NOFOLLOW, (mode_t)mode);
}

int pkg_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    // Called through syscall(2): older glibc headers lack the wrapper.
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

ssize_t pkg_copy_file_range(int fd_in, int64_t *off_in, int fd_out, int64_t *off_out, size_t len) {
    return copy_file_range(fd_in, (off64_t *)off_in, fd_out, (off64_t *)off_out, len, 0);
}

int pkg_fallocate_keep_size(int fd, int64_t offset, int64_t length) {
    return fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
}

int pkg_ofd_lock(int fd, int exclusive, int wait) {
    struct flock lock = {0};
    lock.l_type = exclusive ? F_WRLCK : F_RDLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;
    return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
}

int pkg_ofd_unlock(int fd) {
    struct flock lock = {0};
    lock.l_type = F_UNLCK;
    lock.l_whence = SEEK_SET;
    return fcntl(fd, F_OFD_SETLK, &lock);
}

long pkg_getdents64(int fd, void *buffer, size_t size) {
    return syscall(SYS_getdents64, fd, buffer, size);
}

void pkg_advise_sequential(int fd) { (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL); }

int pkg_available_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

const char *pkg_errno_name(int code) {
    switch (code) {
#define NAME(e) case e: return #e;
    NAME(EPERM) NAME(ENOENT) NAME(ESRCH) NAME(EINTR) NAME(EIO) NAME(ENXIO) NAME(E2BIG)
    NAME(ENOEXEC) NAME(EBADF) NAME(ECHILD) NAME(EAGAIN) NAME(ENOMEM) NAME(EACCES)
    NAME(EFAULT) NAME(EBUSY) NAME(EEXIST) NAME(EXDEV) NAME(ENODEV) NAME(ENOTDIR)
    NAME(EISDIR) NAME(EINVAL) NAME(ENFILE) NAME(EMFILE) NAME(ETXTBSY) NAME(EFBIG)
    NAME(ENOSPC) NAME(ESPIPE) NAME(EROFS) NAME(EMLINK) NAME(EPIPE) NAME(ERANGE)
    NAME(EDEADLK) NAME(ENAMETOOLONG) NAME(ENOLCK) NAME(ENOSYS) NAME(ENOTEMPTY)
    NAME(ELOOP) NAME(EOVERFLOW) NAME(EOPNOTSUPP) NAME(EDQUOT) NAME(ESTALE)
    NAME(ECANCELED) NAME(EILSEQ) NAME(ENODATA) NAME(ETIMEDOUT)
#undef NAME
    default: return NULL;
    }
}

int pkg_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : -errno;
}

int pkg_flock(int fd, int operation) { return flock(fd, operation); }

int pkg_dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

int pkg_signal_is_ignored(int signal) {
    struct sigaction current;
    if (sigaction(signal, NULL, &current) != 0) return 0;
    return current.sa_handler == SIG_IGN;
}

const int PKG_SEEK_DATA = SEEK_DATA;
const int PKG_SEEK_HOLE = SEEK_HOLE;

int pkg_ficlone(int dest_fd, int src_fd) { return ioctl(dest_fd, FICLONE, src_fd); }

int pkg_terminal_columns(int fd) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
    return size.ws_col;
}

int pkg_syncfs(int fd) { return syncfs(fd); }
