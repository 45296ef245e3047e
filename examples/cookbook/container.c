/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: what a container runtime does to a rootfs it does not trust.
 *
 *   container ROOTFS [DIR-DEST...]
 *
 * Makes the mount destinations of a small container (directories and a
 * file bind-mount destination) beneath ROOTFS with IN_ROOT, as the
 * container's processes will see them: symlinks in the rootfs are followed
 * inside it, never out. umask(0), as runtimes run, and every directory
 * made gets 0755. Checks that ROOTFS's /dev/null is the null device by
 * fstat() of an O_PATH descriptor opened without following it (a rootfs
 * that replaced it by a symlink or a file gets nothing written through it:
 * the shape of runc's CVE-2025-31133). Writes /proc/self/oom_score_adj
 * through the verified procfs, never through whatever is mounted on /proc.
 * Failures name the component, in the library's words.
 *
 * Exit status: 0 done, 1 a destination failed, 3 /dev/null refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <safeopen.h>

/* "what `path': component `x' (offset N): words", from the thread's record. */
static int fail(const char *what, const char *path)
{
	int err = errno;
	struct safe_diag d;
	if (safe_diag_get(&d, sizeof(d)) == 0 && d.err == err && d.where != SAFE_DIAG_NONE)
		fprintf(stderr, "%s `%s': component `%s' (%s %llu): %s\n", what, path, d.name,
			d.where == SAFE_DIAG_LINK ? "in a symlink's body, offset" : "offset",
			(unsigned long long)d.offset, safe_strerror(err));
	else
		fprintf(stderr, "%s `%s': %s\n", what, path, safe_strerror(err));
	return -1;
}

/* A directory mount destination (mkdir -p in the container's view). */
static int dir_dest(int rootfs, const char *dest)
{
	int fd = safe_mkdir_all_beneath(rootfs, dest, 0755, SAFE_RESOLVE_IN_ROOT);
	if (fd < 0)
		return fail("mkdir", dest);
	/* A runtime mounts onto this descriptor (move_mount, or the string of
	 * safe_proc_fd_path()), never onto the path again. */
	close(fd);
	printf("dir %s\n", dest);
	return 0;
}

/* A file bind-mount destination, its missing parents made in one call. */
static int file_dest(int rootfs, const char *dest)
{
	int fd = safe_create_all_beneath(rootfs, dest, O_WRONLY | O_CREAT | O_NOFOLLOW, 0644, 0755,
					 SAFE_RESOLVE_IN_ROOT);
	if (fd < 0)
		return fail("create", dest);
	close(fd);
	printf("file %s\n", dest);
	return 0;
}

/* Is the rootfs's /dev/null the null device? Judged on the object itself. */
static int dev_null(int rootfs)
{
	struct safe_open_how how = {
		.flags = O_PATH | O_NOFOLLOW,
		.resolve = SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_NO_MAGICLINKS,
	};
	int fd = safe_openat2(rootfs, "/dev/null", &how, sizeof(how));
	if (fd < 0) {
		if (errno == ENOENT) {
			printf("/dev/null missing: the runtime would bind-mount the host's\n");
			return 0;
		}
		return fail("open", "/dev/null");
	}
	struct stat st;
	int ok = fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
	close(fd);
	if (!ok) {
		fprintf(stderr, "/dev/null is not the null device: refused\n");
		return -1;
	}
	printf("/dev/null ok\n");
	return 0;
}

/* Write this process's own oom_score_adj back through the verified procfs. */
static int proc_write(void)
{
	char val[32];
	int fd = safe_proc_open(SAFE_PROC_SELF, "oom_score_adj", O_RDWR, 0);
	if (fd < 0)
		return fail("open /proc/self/", "oom_score_adj");
	ssize_t n = read(fd, val, sizeof(val) - 1);
	int ok = n > 0 && pwrite(fd, val, (size_t)n, 0) == n;
	close(fd);
	if (!ok)
		return fail("write /proc/self/", "oom_score_adj");
	unsigned int kind = 0;
	int h = safe_proc_handle(0, &kind);
	if (h >= 0)
		close(h);
	printf("proc oom_score_adj written (procfs handle kind %u)\n", kind);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s ROOTFS [DIR-DEST...]\n", argv[0]);
		return 2;
	}
	umask(0);            /* as a runtime builds a container */
	safe_diag_enable(1); /* component-level messages */
	int rootfs = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfs < 0) {
		perror(argv[1]);
		return 2;
	}
	static const char *const dirs[] = { "/proc", "/sys/fs/cgroup", "/dev/shm", "/dev/mqueue" };
	int rc = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		rc |= dir_dest(rootfs, dirs[i]);
	rc |= file_dest(rootfs, "/etc/resolv.conf");
	rc |= file_dest(rootfs, "/run/secrets/token");
	for (int i = 2; i < argc; i++)
		rc |= dir_dest(rootfs, argv[i]);
	int null_rc = dev_null(rootfs);
	rc |= proc_write();
	close(rootfs);
	return null_rc ? 3 : rc ? 1 : 0;
}
