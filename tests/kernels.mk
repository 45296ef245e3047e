# `make check-kernels`: every Check suite and the CLI test under seccomp profiles that
# make this kernel look like an older one (tests/kernel-profile.c: each system
# call newer than the profile's kernel fails with ENOSYS, for the whole test
# process and its children) or that block openat2 (EPERM, ENOSYS). The table
# printed at the end is profile x suite x result; any profile whose results
# differ from the unfiltered run ("full") fails the target.
check_PROGRAMS += tests/kernel-profile
tests_kernel_profile_SOURCES = tests/kernel-profile.c

KERNEL_PROFILES = full 4.18 5.4 5.10 5.15 6.1 openat2-eperm openat2-enosys
KERNEL_TESTS = $(VALGRIND_TESTS) tests/test-cli.sh
check-kernels: tests/kernel-profile$(EXEEXT)
	@MAKE='$(MAKE)' AM_MAKEFLAGS='$(AM_MAKEFLAGS)' KERNEL_TESTS='$(KERNEL_TESTS)' \
	  $(SHELL) $(srcdir)/tests/check-kernels.sh $(KERNEL_PROFILES)
PHONY_TARGETS += check-kernels
EXTRA_DIST += tests/check-kernels.sh
CLEANFILES += tests/kernels.table

# `make check-qemu KERNEL=/path/to/vmlinuz`: the resolver table, tmpfile and
# ops suites on a real (older) kernel under qemu (tests/check-qemu.sh).
check-qemu: $(check_PROGRAMS)
	@KERNEL='$(KERNEL)' QEMU_FS='$(QEMU_FS)' $(SHELL) $(srcdir)/tests/check-qemu.sh
PHONY_TARGETS += check-qemu
EXTRA_DIST += tests/check-qemu.sh
CLEANFILES += tests/qemu-console.log
