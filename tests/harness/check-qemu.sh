#!/bin/sh
# make check-qemu KERNEL=/path/to/vmlinuz [QEMU_SUITES="test_resolve ..."]
#
# Boots KERNEL under qemu-system-x86_64 (TCG: no KVM needed) with a minimal
# initramfs: busybox, the built test binaries and the shared libraries they
# load. The init script mounts /proc, /sys, /dev and a scratch tmpfs, runs each
# suite there as root, prints one "qemu-result SUITE EXIT SECONDS" line per
# suite and powers off. Debian 12's kernel (6.1: no fchmodat2, no *xattrat, no
# tmpfs user xattrs) is what this is for:
#     apt-get download linux-image-6.1.0-*-amd64 && dpkg-deb -x linux-image-*.deb k
#     make check-qemu KERNEL=k/boot/vmlinuz-6.1.0-*-amd64 [QEMU_FS=ext4]
# Called from the build directory by make.
set -eu
: "${KERNEL:?set KERNEL=/path/to/vmlinuz}"
suites=${QEMU_SUITES:-test_resolve test_resolve_system test_tmpfile test_tmpfile_sandbox test_sweep test_parents test_ops test_ops_attr test_rmtree test_realpath}
timeout_s=${QEMU_TIMEOUT:-3000}
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || { echo "check-qemu: busybox not found (Debian package busybox-static)"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "check-qemu: qemu-system-x86_64 not found (Debian package qemu-system-x86)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/safeopen-qemu.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/scratch" "$root/tmp" "$root/tests" "$root/lib"
cp "$busybox" "$root/bin/busybox"
for a in sh mount umount mkdir poweroff sync cat date echo timeout rm ls sleep insmod losetup grep; do
	ln -s busybox "$root/bin/$a"
done
copy_with_libs() {
	cp "$1" "$root/tests/"
	LD_LIBRARY_PATH=lib/.libs ldd "$1" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r l; do
		mkdir -p "$root$(dirname "$l")"
		[ -e "$root$l" ] || cp -L "$l" "$root$l"
	done
}
for s in $suites; do
	bin=tests/.libs/$s
	[ -x "$bin" ] || bin=tests/$s
	copy_with_libs "$bin"
done
cp -L lib/.libs/libsafeopen.so.1 "$root/lib/"
# QEMU_FS=ext4: the scratch directory is an ext4 image (loop device) instead
# of tmpfs; the modules come from the kernel package unpacked around KERNEL
# (.../boot/vmlinuz-V and .../lib/modules/V).
fs=${QEMU_FS:-tmpfs}
if [ "$fs" = ext4 ]; then
	kver=$(basename "$KERNEL" | sed 's/^vmlinuz-//')
	mods=$(dirname "$KERNEL")/../lib/modules/$kver/kernel
	mkdir -p "$root/modules"
	for m in lib/crc16 crypto/crc32c_generic fs/mbcache fs/jbd2/jbd2 fs/ext4/ext4 drivers/block/loop; do
		cp "$mods/$m.ko" "$root/modules/" || { echo "check-qemu: no $mods/$m.ko"; exit 1; }
	done
	truncate -s 128M "$root/scratch.img"
	mkfs.ext4 -q -F -b 4096 "$root/scratch.img"
fi
cat > "$root/init" <<'EOI'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
if [ -f /scratch.img ]; then
	for m in crc16 crc32c_generic mbcache jbd2 ext4 loop; do insmod /modules/$m.ko; done
	mount -t ext4 -o loop /scratch.img /scratch
else
	mount -t tmpfs -o size=512m scratch /scratch
fi
echo "qemu-scratch $(grep ' /scratch ' /proc/mounts)"
mount -t tmpfs tmp /tmp
export LD_LIBRARY_PATH=/lib SAFEOPEN_TEST_DIR=/scratch CK_DEFAULT_TIMEOUT=600 PATH=/bin
echo "qemu-kernel $(cat /proc/sys/kernel/osrelease)"
cd /scratch
for s in SUITES; do
	start=$(date +%s)
	/tests/$s
	rc=$?
	echo "qemu-result $s $rc $(( $(date +%s) - start ))"
done
sync
poweroff -f
EOI
sed -i "s/SUITES/$suites/" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"
echo "check-qemu: initramfs $(du -k "$work/initrd.gz" | cut -f1) KiB, kernel $KERNEL, suites: $suites"
start=$(date +%s)
# no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer check
# can miss its ticks and panic ("IO-APIC + timer doesn't work").
timeout "$timeout_s" qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nographic -no-reboot \
	-kernel "$KERNEL" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet rdinit=/init no_timer_check" > "$work/console.log" 2>&1 || true
cp "$work/console.log" tests/qemu-console.log
echo "check-qemu: qemu ran $(( $(date +%s) - start ))s; console in tests/qemu-console.log"
grep -E '^(qemu-kernel|qemu-scratch|qemu-result|[0-9]+%: Checks)' tests/qemu-console.log | tr -d '\r'
status=0
for s in $suites; do
	r=$(tr -d '\r' < tests/qemu-console.log | awk -v s="$s" '$1 == "qemu-result" && $2 == s { print $3 }')
	if [ "$r" != 0 ]; then echo "check-qemu: $s: ${r:-did not finish}"; status=1; fi
done
exit $status
