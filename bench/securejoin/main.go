// SPDX-License-Identifier: MIT

// Command securejoin-bench times filepath-securejoin's SecureJoin(root, path)
// followed by an open(2) of the path it returns, on the path shapes of
// bench/bench (bench/shapes.c), in a tree built the same way, and with the
// same method: a calibrated batch of about --batch-ms, then --batches
// batches, the median ns per call. bench/securejoin.sh sets its figures next
// to the userspace walker's (`make bench-securejoin`, bench/README.md).
//
// SecureJoin is racy by design (the tree can change between the join and the
// open); it is measured here only as a cost to compare with.
//
// Built in GOPATH mode against Debian's packaged sources
// (golang-github-cyphar-filepath-securejoin-dev), without a network.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// The sizes of bench/bench.h.
const (
	treeDepth   = 320   // levels of d/ (TREE_DEPTH)
	dotdotDepth = 300   // the dotdot300 shape (DOTDOT_DEPTH)
	bigEntries  = 10000 // entries of big/ (BIGDIR_ENTRIES)
	chunk       = 256   // creations timed between untimed removals (CHUNK)
	probeCalls  = 8     // calls counted under strace (PROBE_CALLS)
	maxBatches  = 101   // MAX_BATCHES
)

// Linux clock ids (not in package syscall).
const (
	clockMonotonic     = 1
	clockProcessCPU    = 2
	clockThreadCPUTime = 3
)

type shape struct {
	key    string
	path   string // relative to the root
	expect string // the symlink-free name of the object; "" when ENOENT is expected
	comps  int
	create bool // O_CREAT|O_EXCL of a new name under path (a directory ending in "/")
	note   string
}

type result struct {
	status      string // ok, wrong, fail
	detail      string
	ops         int64
	ns          []float64 // ns per call of each batch (the timing clock)
	proc        []float64 // the same batches by the process's CPU clock
	med, lo, hi float64
	procMed     float64
	sys         float64 // syscalls per call; < 0 unknown
	sysDetail   string
}

var (
	root     string // absolute, canonical
	seq      uint32 = 0
	timeClk  uintptr
	batchNs  float64
	nBatches int
)

// The shapes of bench/shapes.c, init_shapes(), in its order. abslink is an
// absolute symlink resolved IN_ROOT there: SecureJoin resolves every symlink
// with the root as "/", so it maps as it is. creat creates new/nXXXXXXXX:
// SecureJoin of the new name (a missing last component is joined as it is),
// then open(O_WRONLY|O_CREAT|O_EXCL).
func shapes() []shape {
	d := func(n int) string { return strings.Repeat("d/", n) }
	return []shape{
		{key: "one", path: "f", expect: "f", comps: 1},
		{key: "deep8", path: d(8) + "f", expect: d(8) + "f", comps: 9},
		{key: "symlinks3", path: "sym/la/lb/lc/file", expect: "sym/ra/rb/rc/file", comps: 5},
		{key: "abslink", path: "abs/lnk", expect: "abs/tgt/file", comps: 2,
			note: "SecureJoin scopes absolute symlinks to the root (IN_ROOT)"},
		{key: "dotdots", path: "a/b/../b/c/../../a/b/file", expect: "a/a/b/file", comps: 10},
		{key: "comp64", path: d(63) + "f", expect: d(63) + "f", comps: 64},
		{key: "dotdot300", path: d(dotdotDepth) + "../f", expect: d(dotdotDepth-1) + "f",
			comps: dotdotDepth + 2},
		{key: "bigdir", path: "big/e05000", expect: "big/e05000", comps: 2},
		{key: "enoent", path: "d/d/d/missing", expect: "", comps: 4},
		{key: "creat", path: "new/", comps: 2, create: true},
	}
}

func clock(id uintptr) float64 {
	var ts syscall.Timespec
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		fmt.Fprintf(os.Stderr, "securejoin-bench: clock_gettime(%d): %v\n", id, e)
		os.Exit(2)
	}
	return float64(ts.Sec)*1e9 + float64(ts.Nsec)
}

// ------------------------------------------------------------------ the tree

func touch(name string) error {
	fd, err := syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0644)
	if err != nil {
		return &os.PathError{Op: "create", Path: name, Err: err}
	}
	return syscall.Close(fd)
}

// buildTree makes what build_tree() in bench/shapes.c makes.
func buildTree() error {
	dir := root
	for level := 0; ; level++ {
		if err := touch(dir + "/f"); err != nil {
			return err
		}
		if level == treeDepth-1 {
			break
		}
		dir += "/d"
		if err := os.Mkdir(dir, 0755); err != nil {
			return err
		}
	}
	for _, d := range []string{"sym", "sym/ra", "sym/ra/rb", "sym/ra/rb/rc", "abs", "abs/tgt",
		"big", "new", "tmp", "a", "a/b", "a/b/c", "a/a", "a/a/b"} {
		if err := os.Mkdir(root+"/"+d, 0755); err != nil {
			return err
		}
	}
	links := [][2]string{{"ra", "sym/la"}, {"rb", "sym/ra/lb"}, {"../rb/rc", "sym/ra/rb/lc"},
		{"/abs/tgt/file", "abs/lnk"}}
	for _, f := range []string{"sym/ra/rb/rc/file", "abs/tgt/file", "a/a/b/file", "fill"} {
		if err := touch(root + "/" + f); err != nil {
			return err
		}
	}
	for _, l := range links {
		if err := os.Symlink(l[0], root+"/"+l[1]); err != nil {
			return err
		}
	}
	// big/: e05000 a file of its own, the 9,999 others hard links to "fill".
	for i := 0; i < bigEntries; i++ {
		name := fmt.Sprintf("%s/big/e%05d", root, i)
		var err error
		if i == bigEntries/2 {
			err = touch(name)
		} else {
			err = os.Link(root+"/fill", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ------------------------------------------------------------------ the operation

// op is the timed call: SecureJoin, then open(2) of the result (O_RDONLY, or
// a new file for creat, with the flags of the realpath method of
// bench/methods.c). It returns the descriptor, or -1 and the error.
func op(s *shape, rel string) (int, error) {
	p, err := securejoin.SecureJoin(root, rel)
	if err != nil {
		return -1, err
	}
	flags, mode := syscall.O_RDONLY|syscall.O_CLOEXEC, uint32(0)
	if s.create {
		flags, mode = syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0600
	}
	return syscall.Open(p, flags, mode)
}

func freshName(s *shape) string {
	seq++
	return fmt.Sprintf("%sn%08d", s.path, seq)
}

// check is verify_cell()'s check_result(): the descriptor must be the
// object want names (same st_dev and st_ino, a regular file), or the call
// must fail with ENOENT when want is "".
func check(fd int, err error, want string, dev uint64, ino uint64) string {
	if want == "" {
		if fd >= 0 {
			return "opened an object, ENOENT expected"
		}
		if !errors.Is(err, syscall.ENOENT) {
			return fmt.Sprintf("%v, ENOENT expected", err)
		}
		return ""
	}
	if fd < 0 {
		return fmt.Sprintf("%v, expected %s", err, want)
	}
	var got, exp syscall.Stat_t
	if syscall.Fstat(fd, &got) != nil || syscall.Lstat(root+"/"+want, &exp) != nil {
		return want + ": cannot stat"
	}
	if got.Dev != exp.Dev || got.Ino != exp.Ino || got.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "opened another object than " + want
	}
	if dev != 0 && (got.Dev != dev || got.Ino != ino) {
		return want + " changed during the run"
	}
	return ""
}

func verify(s *shape, dev, ino uint64) string {
	for i := 0; i < 9; i++ {
		rel, want := s.path, s.expect
		if s.create {
			rel = freshName(s)
			want = rel
		}
		fd, err := op(s, rel)
		bad := check(fd, err, want, dev, ino)
		if fd >= 0 {
			syscall.Close(fd)
		}
		if s.create {
			syscall.Unlink(root + "/" + rel)
		}
		if bad != "" {
			return bad
		}
	}
	return ""
}

// timeOps runs n calls; the ns spent by the timing clock and by the process
// CPU clock, or an error on an unexpected result. Creations are timed in
// chunks, the files removed between chunks, untimed.
func timeOps(s *shape, n int64) (float64, float64, error) {
	if !s.create {
		wantFd := s.expect != ""
		t0, p0 := clock(timeClk), clock(clockProcessCPU)
		for i := int64(0); i < n; i++ {
			fd, err := op(s, s.path)
			if fd >= 0 {
				syscall.Close(fd)
			}
			if (fd >= 0) != wantFd {
				return 0, 0, fmt.Errorf("unexpected result while timing: %v", err)
			}
		}
		p1 := clock(clockProcessCPU)
		return clock(timeClk) - t0, p1 - p0, nil
	}
	var total, ptotal float64
	names := make([]string, chunk)
	for done := int64(0); done < n; {
		k := n - done
		if k > chunk {
			k = chunk
		}
		for i := int64(0); i < k; i++ {
			names[i] = freshName(s)
		}
		var i int64
		var err error
		t0, p0 := clock(timeClk), clock(clockProcessCPU)
		for ; i < k; i++ {
			var fd int
			if fd, err = op(s, names[i]); err != nil {
				break
			}
			syscall.Close(fd)
		}
		p1 := clock(clockProcessCPU)
		total += clock(timeClk) - t0
		ptotal += p1 - p0
		for j := int64(0); j < i; j++ {
			syscall.Unlink(root + "/" + names[j])
		}
		if i < k {
			return 0, 0, fmt.Errorf("%v while timing", err)
		}
		done += k
	}
	return total, ptotal, nil
}

func median(v []float64) (med, lo, hi float64) {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		med = s[n/2]
	} else {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// measure: calibration (the warm-up) as in bench/measure.c, then the batches.
func measure(s *shape, r *result) {
	n := int64(1)
	var t float64
	for {
		var err error
		if t, _, err = timeOps(s, n); err != nil {
			r.status, r.detail = "fail", err.Error()
			return
		}
		if t >= batchNs/4 || n >= 1<<30 {
			break
		}
		if t < batchNs/64 {
			n *= 8
		} else {
			n *= 2
		}
	}
	if t <= 0 {
		t = 1
	}
	r.ops = int64(float64(n) * batchNs / t)
	if r.ops < 1 {
		r.ops = 1
	}
	for b := 0; b < nBatches; b++ {
		t, p, err := timeOps(s, r.ops)
		if err != nil {
			r.status, r.detail = "fail", err.Error()
			return
		}
		r.ns = append(r.ns, t/float64(r.ops))
		r.proc = append(r.proc, p/float64(r.ops))
	}
	r.med, r.lo, r.hi = median(r.ns)
	r.procMed, _, _ = median(r.proc)
}

// ------------------------------------------------------------------ syscalls (strace)

// probe is the child side, run under strace: two warm-up calls, then
// probeCalls calls between two marker system calls, all on this thread.
func probe(s *shape) int {
	for i := 0; i < 2; i++ {
		rel := s.path
		if s.create {
			rel = freshName(s)
		}
		if fd, _ := op(s, rel); fd >= 0 {
			syscall.Close(fd)
		}
		if s.create {
			syscall.Unlink(root + "/" + rel)
		}
	}
	names := make([]string, probeCalls)
	for i := range names {
		names[i] = s.path
		if s.create {
			names[i] = freshName(s)
		}
	}
	syscall.Access("/@safeopen-bench-begin", 0)
	for i := 0; i < probeCalls; i++ {
		if fd, _ := op(s, names[i]); fd >= 0 {
			syscall.Close(fd)
		}
	}
	syscall.Access("/@safeopen-bench-end", 0)
	if s.create {
		for _, n := range names {
			syscall.Unlink(root + "/" + n)
		}
	}
	return 0
}

// countSyscalls runs this program as a probe under `strace -f` and counts
// the system calls that the marking thread made between the markers (the
// Go runtime's other threads are left out).
func countSyscalls(s *shape, r *result) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	out := root + "/strace.out"
	defer os.Remove(out)
	cmd := exec.Command("strace", "-f", "-qq", "-o", out, "--", exe, "--probe", s.key,
		"--probe-root", root)
	if cmd.Run() != nil {
		r.sysDetail = "strace failed"
		return
	}
	f, err := os.Open(out)
	if err != nil {
		return
	}
	defer f.Close()
	tid, total, done := "", 0, false
	counts := map[string]int{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() && !done {
		line := sc.Text()
		id, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimLeft(rest, " ")
		switch {
		case strings.Contains(line, "@safeopen-bench-begin"):
			tid = id
			continue
		case tid != "" && id == tid && strings.Contains(line, "@safeopen-bench-end"):
			done = true
			continue
		}
		if tid == "" || id != tid || rest == "" || strings.ContainsAny(rest[:1], "+-<") {
			continue
		}
		name, _, ok := strings.Cut(rest, "(")
		if !ok {
			continue
		}
		if counts[name] == 0 {
			order = append(order, name)
		}
		counts[name]++
		total++
	}
	if !done {
		return
	}
	r.sys = float64(total) / probeCalls
	var parts []string
	for _, n := range order {
		parts = append(parts, fmt.Sprintf("%s %g", n, float64(counts[n])/probeCalls))
	}
	r.sysDetail = strings.Join(parts, ", ")
}

// ------------------------------------------------------------------ main

func pin(cpu int) error {
	var mask [16]uint64
	if cpu < 0 || cpu >= len(mask)*64 {
		return syscall.EINVAL
	}
	mask[cpu/64] |= 1 << (uint(cpu) % 64)
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask),
		uintptr(unsafe.Pointer(&mask)))
	if e != 0 {
		return e
	}
	return nil
}

func main() {
	// Every timed call runs on this thread, whose CPU clock is read.
	runtime.LockOSThread()

	// The options of bench/bench that apply here; the others are accepted
	// so that one set of options serves both programs.
	dir := flag.String("dir", ".", "build the test tree in `DIR`")
	csv := flag.String("csv", "", "write the figures to `FILE` (bench/bench's CSV columns)")
	quick := flag.Bool("quick", false, "2 ms batches: a rough look")
	verifyOnly := flag.Bool("verify-only", false, "check each shape opens the right object; no timing")
	cpu := flag.Int("cpu", -1, "pin the timing thread to CPU `N`")
	clk := flag.String("clock", "wall", "wall (CLOCK_MONOTONIC) or cpu (the thread's CPU time)")
	batches := flag.Int("batches", 7, "batches per shape (7 to 101)")
	batchMs := flag.Int("batch-ms", 0, "length of a batch in `MS` (default 100, 2 with --quick)")
	noStrace := flag.Bool("no-strace", false, "do not count syscalls with strace")
	only := flag.String("only", "", "accepted for bench/bench's sake: only shapes are measured")
	flag.Bool("allow-enosys", false, "accepted for bench/bench's sake; no effect")
	probeKey := flag.String("probe", "", "(internal) run one shape under strace")
	probeRoot := flag.String("probe-root", "", "(internal) the tree of --probe")
	flag.Parse()
	if flag.NArg() > 0 || (*only != "" && *only != "shapes") || *batches < 7 ||
		*batches > maxBatches || (*clk != "wall" && *clk != "cpu") {
		flag.Usage()
		os.Exit(2)
	}
	all := shapes()

	if *probeKey != "" {
		root = *probeRoot
		seq = 90000000
		for i := range all {
			if all[i].key == *probeKey {
				os.Exit(probe(&all[i]))
			}
		}
		os.Exit(2)
	}

	timeClk = clockMonotonic
	if *clk == "cpu" {
		timeClk = clockThreadCPUTime
	}
	ms := *batchMs
	if ms <= 0 {
		ms = 100
		if *quick {
			ms = 2
		}
	}
	batchNs = float64(ms) * 1e6
	nBatches = *batches
	if *cpu >= 0 {
		if err := pin(*cpu); err != nil {
			fmt.Fprintf(os.Stderr, "securejoin-bench: --cpu %d: %v\n", *cpu, err)
			os.Exit(2)
		}
	}

	canon, err := filepath.EvalSymlinks(*dir)
	if err == nil {
		canon, err = filepath.Abs(canon)
	}
	if err == nil {
		root, err = os.MkdirTemp(canon, "safeopen-securejoin.")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "securejoin-bench: cannot create a directory in %s: %v\n", *dir, err)
		os.Exit(2)
	}
	// The tree goes however the program ends (but a kill).
	code := run(all, *verifyOnly, *noStrace, *csv, ms)
	if err := os.RemoveAll(root); err != nil {
		fmt.Fprintf(os.Stderr, "securejoin-bench: could not remove %s: %v\n", root, err)
	}
	os.Exit(code)
}

func run(all []shape, verifyOnly, noStrace bool, csv string, ms int) int {
	if err := buildTree(); err != nil {
		fmt.Fprintf(os.Stderr, "securejoin-bench: building the tree in %s: %v\n", root, err)
		return 2
	}
	if _, err := exec.LookPath("strace"); err != nil {
		noStrace = true
	}
	clkName := "wall clock"
	if timeClk == clockThreadCPUTime {
		clkName = "thread CPU time"
	}
	fmt.Printf("SecureJoin + open + close, %s, %s\ntree: %s\n", runtime.Version(), clkName, root)
	if !verifyOnly {
		fmt.Printf("ns per call: median of %d batches of ~%d ms after a warm-up (min..max); "+
			"proc: the process's CPU time (Go runtime threads included)\n", nBatches, ms)
	}
	res := make([]result, len(all))
	wrong := 0
	for i := range all {
		s, r := &all[i], &res[i]
		r.sys = -1
		var dev, ino uint64
		if s.expect != "" {
			var st syscall.Stat_t
			if syscall.Lstat(root+"/"+s.expect, &st) == nil {
				dev, ino = st.Dev, st.Ino
			}
		}
		r.status = "ok"
		if bad := verify(s, dev, ino); bad != "" {
			r.status, r.detail = "wrong", bad
			wrong++
		} else if !verifyOnly {
			measure(s, r)
			if r.status == "ok" && !noStrace {
				countSyscalls(s, r)
			}
		}
		switch {
		case r.status != "ok":
			fmt.Printf("%-10s %s: %s\n", s.key, strings.ToUpper(r.status), r.detail)
		case verifyOnly:
			fmt.Printf("%-10s ok\n", s.key)
		default:
			sys := "-"
			if r.sys >= 0 {
				sys = fmt.Sprintf("%g (%s)", r.sys, r.sysDetail)
			}
			fmt.Printf("%-10s %10.0f ns (%.0f..%.0f)  proc %.0f ns  syscalls %s\n", s.key,
				r.med, r.lo, r.hi, r.procMed, sys)
		}
	}
	if !verifyOnly {
		// One line a shape for scripts.
		for i := range all {
			if r := &res[i]; r.status == "ok" {
				fmt.Printf("shape,%s,securejoin_ns,%.2f,%.2f,%.2f\n", all[i].key, r.med, r.lo, r.hi)
			}
		}
	}
	if csv != "" {
		if err := writeCSV(csv, all, res); err != nil {
			fmt.Fprintf(os.Stderr, "securejoin-bench: %v\n", err)
			return 2
		}
	}
	if wrong > 0 {
		return 1
	}
	return 0
}

// writeCSV writes bench/bench's columns (section,shape,components,method,
// stat,value), method "securejoin-open"; proc_median is the median by the
// process CPU clock.
func writeCSV(file string, all []shape, res []result) error {
	var b strings.Builder
	b.WriteString("section,shape,components,method,stat,value\n")
	for i := range all {
		s, r := &all[i], &res[i]
		pre := fmt.Sprintf("shape,%s,%d,securejoin-open,", s.key, s.comps)
		b.WriteString(pre + "status," + r.status + "\n")
		for j, v := range r.ns {
			b.WriteString(pre + "batch" + strconv.Itoa(j) + "," + strconv.FormatFloat(v, 'f', 2, 64) + "\n")
		}
		if len(r.ns) > 0 {
			for _, kv := range []struct {
				k string
				v float64
			}{{"median", r.med}, {"min", r.lo}, {"max", r.hi}, {"proc_median", r.procMed}} {
				b.WriteString(pre + kv.k + "," + strconv.FormatFloat(kv.v, 'f', 2, 64) + "\n")
			}
			b.WriteString(pre + "ops_per_batch," + strconv.FormatInt(r.ops, 10) + "\n")
		}
		if r.sys >= 0 {
			b.WriteString(pre + "syscalls_per_call," + strconv.FormatFloat(r.sys, 'g', -1, 64) + "\n")
		}
	}
	return os.WriteFile(file, []byte(b.String()), 0644)
}
