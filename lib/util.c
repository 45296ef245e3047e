/* SPDX-License-Identifier: MIT */
/* Small helpers with no better home. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

void so_random_name(char *buf, size_t n)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char raw[64];
	size_t got = 0;

	while (got < n) {
		size_t want = n - got < sizeof(raw) ? n - got : sizeof(raw);
		ssize_t r = getrandom(raw, want, GRND_NONBLOCK);
		if (r <= 0) {
			/* No entropy available yet (early boot) or no getrandom:
			 * names only need to be unpredictable enough to avoid
			 * collisions, since every creation uses O_EXCL. */
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
				     ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)buf;
			for (size_t i = 0; i < want; i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				raw[i] = (unsigned char)x;
			}
			r = (ssize_t)want;
		}
		for (ssize_t i = 0; i < r; i++)
			buf[got + (size_t)i] = alphabet[raw[i] % (sizeof(alphabet) - 1)];
		got += (size_t)r;
	}
}

void so_hidden_name(char buf[SO_HIDDEN_LEN + 1])
{
	memcpy(buf, SO_HIDDEN_PREFIX, sizeof(SO_HIDDEN_PREFIX) - 1);
	so_random_name(buf + sizeof(SO_HIDDEN_PREFIX) - 1, SO_HIDDEN_RANDOM);
	buf[SO_HIDDEN_LEN] = '\0';
}

int so_path_len(const char *path, size_t *lenp)
{
	if (!path)
		return so_fail(EFAULT);
	size_t len = strnlen(path, PATH_MAX);
	if (len == 0)
		return so_fail(ENOENT);
	if (len >= PATH_MAX)
		return so_fail(ENAMETOOLONG);
	*lenp = len;
	return 0;
}

int so_statx_at(int fd, const char *name, unsigned int mask, struct statx *stx)
{
	int atflags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT;
	if (!name || !*name) {
		name = "";
		atflags |= AT_EMPTY_PATH;
	}
	if (statx(fd, name, atflags, mask, stx) == 0) {
		/* The test hook of a kernel before 5.8 (so_test_hook()):
		 * neither the mount id nor STATX_ATTR_MOUNT_ROOT. */
		if (so_test_hook("SAFEOPEN_TEST_STATX_NO_MOUNT")) {
			stx->stx_mask &= ~(unsigned int)STATX_MNT_ID;
			stx->stx_mnt_id = 0;
			stx->stx_attributes_mask &= ~(uint64_t)STATX_ATTR_MOUNT_ROOT;
			stx->stx_attributes &= ~(uint64_t)STATX_ATTR_MOUNT_ROOT;
		}
		return 0;
	}
	if (errno != ENOSYS)
		return -1;
	struct stat st;
	if (fstatat(fd, name, &st, atflags) < 0)
		return -1;
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_mode = (uint16_t)st.st_mode;
	stx->stx_nlink = (uint32_t)st.st_nlink;
	stx->stx_uid = st.st_uid;
	stx->stx_gid = st.st_gid;
	stx->stx_ino = st.st_ino;
	stx->stx_size = (uint64_t)st.st_size;
	stx->stx_blocks = (uint64_t)st.st_blocks;
	stx->stx_blksize = (uint32_t)st.st_blksize;
	stx->stx_dev_major = major(st.st_dev);
	stx->stx_dev_minor = minor(st.st_dev);
	stx->stx_rdev_major = major(st.st_rdev);
	stx->stx_rdev_minor = minor(st.st_rdev);
	stx->stx_atime.tv_sec = st.st_atim.tv_sec;
	stx->stx_atime.tv_nsec = (uint32_t)st.st_atim.tv_nsec;
	stx->stx_mtime.tv_sec = st.st_mtim.tv_sec;
	stx->stx_mtime.tv_nsec = (uint32_t)st.st_mtim.tv_nsec;
	stx->stx_ctime.tv_sec = st.st_ctim.tv_sec;
	stx->stx_ctime.tv_nsec = (uint32_t)st.st_ctim.tv_nsec;
	return 0;
}

const char *safe_version(void)
{
	return PACKAGE_VERSION;
}

bool so_test_hook(const char *var)
{
	const char *v = secure_getenv(var);
	return v && *v && strcmp(v, "0") != 0;
}
