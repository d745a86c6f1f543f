#ifndef PKG_SYSTEM_SHIMS_H
#define PKG_SYSTEM_SHIMS_H

// Linux calls that Swift cannot reach through Glibc: variadic functions (open, fcntl),
// calls glibc hides behind _GNU_SOURCE (renameat2, copy_file_range, O_TMPFILE),
// and constants defined as macros Swift does not import. One wrapper per call;
// every wrapper returns what the kernel returned and leaves errno as it set it.

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// openat(2) with an explicit mode (the libc call is variadic).
int pkg_openat(int dirfd, const char *path, int flags, unsigned int mode);

/// openat2(2) with RESOLVE_NO_SYMLINKS (and RESOLVE_BENEATH when `beneath` is non-zero):
/// no component of `path` may be a symbolic link, so a walk or an extraction can never be
/// redirected by a link swapped in behind its back. Falls back to openat(2) with O_NOFOLLOW
/// (last component only) on kernels without openat2 (ENOSYS).
int pkg_openat_nofollow(int dirfd, const char *path, int flags, unsigned int mode, int beneath);

/// renameat2(2). `flags` is 0 or one of the PKG_RENAME_* values.
int pkg_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
extern const unsigned int PKG_RENAME_NOREPLACE;
extern const unsigned int PKG_RENAME_EXCHANGE;

/// copy_file_range(2): copies in the kernel between two descriptors, without user-space buffers.
/// sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE): start write-back of every dirty page
/// of the file without waiting for it.
int pkg_start_writeback(int fd);

ssize_t pkg_copy_file_range(int fd_in, int64_t *off_in, int fd_out, int64_t *off_out, size_t len);

/// Open file description (OFD) locks on the whole file, fcntl(F_OFD_SETLK[W]).
/// `exclusive`: write lock, else read lock. `wait`: block until granted.
/// fallocate(2) with FALLOC_FL_KEEP_SIZE: allocates the blocks of a range (beyond the end
/// too) without changing the file's size, so that later writes there cannot meet ENOSPC.
int pkg_fallocate_keep_size(int fd, int64_t offset, int64_t length);

/// syncfs(2) (declared by glibc only under _GNU_SOURCE).
int pkg_syncfs(int fd);

/// The width in columns of the terminal `fd` is (TIOCGWINSZ), or 0 when it is none or says none.
int pkg_terminal_columns(int fd);
int pkg_ofd_lock(int fd, int exclusive, int wait);
int pkg_ofd_unlock(int fd);

/// getdents64(2): fills `buffer` with `struct linux_dirent64` records; 0 at the end.
long pkg_getdents64(int fd, void *buffer, size_t size);

/// ioctl(dest_fd, FICLONE, src_fd): makes `dest_fd` share every extent of `src_fd` (XFS,
/// btrfs: a reflink, no data written); fails with EOPNOTSUPP, EXDEV or EINVAL elsewhere.
int pkg_ficlone(int dest_fd, int src_fd);

/// flock(2) (Swift sees only `struct flock` under that name).
int pkg_flock(int fd, int operation);

/// A duplicate of `fd` closed on exec (fcntl F_DUPFD_CLOEXEC), as every descriptor pkgtool
/// opens is: a child process another thread starts meanwhile must not inherit it.
int pkg_dup_cloexec(int fd);

/// Whether `signal`'s disposition is "ignore" (inherited from the parent, as a shell sets
/// SIGINT for a background job or nohup sets SIGHUP): such a signal must stay ignored.
int pkg_signal_is_ignored(int signal);

/// lseek whence values glibc defines only under _GNU_SOURCE.
extern const int PKG_SEEK_DATA;
extern const int PKG_SEEK_HOLE;

/// Flags Swift does not import as constants.
extern const int PKG_O_TMPFILE;
extern const int PKG_O_DIRECTORY;
extern const int PKG_O_NOFOLLOW;
extern const int PKG_O_CLOEXEC;
extern const int PKG_O_PATH;
extern const int PKG_AT_FDCWD;
extern const int PKG_AT_SYMLINK_NOFOLLOW;
extern const int PKG_AT_REMOVEDIR;
extern const int PKG_AT_EMPTY_PATH;
extern const int PKG_AT_SYMLINK_FOLLOW;

/// posix_fadvise(POSIX_FADV_SEQUENTIAL) over the whole file: a hint, failures ignored.
void pkg_advise_sequential(int fd);

/// The number of CPUs this process may run on (sched_getaffinity), at least 1.
int pkg_available_cpus(void);

/// Bytes of heap the C allocator has handed out and not yet taken back (mallinfo2's
/// uordblks + hblkhd): how tests check that a call allocated little.
size_t pkg_heap_bytes_in_use(void);

/// Makes every heap block of at least `threshold` bytes a mapping of its own, given back
/// to the system when freed (mallopt's M_MMAP_THRESHOLD, which also stops glibc raising
/// the threshold after the first such block is freed).
void pkg_return_large_blocks_promptly(size_t threshold);

/// Gives the pages of every arena's free blocks back to the system (malloc_trim(3)).
void pkg_release_free_memory(void);

/// The symbolic name of an errno value ("ENOENT"), or NULL when unknown.
const char *pkg_errno_name(int code);

/// Tells the CPU that this thread is spinning on a value another thread will change
/// (x86 PAUSE, Arm YIELD): it yields the core's shared resources and saves power.
static inline void pkg_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
