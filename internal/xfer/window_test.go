package xfer_test

import (
	"bytes"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/minio/highwayhash"

	"github.com/natssend/natssend/internal/xfer"
)

func TestStartQuantumFrame(t *testing.T) {
	for _, tc := range []struct {
		declared, start, quantum int64
	}{
		{1, 1, 1},
		{3, 3, 1},
		{64 << 10, 64 << 10, 16 << 10},
		{xfer.InitialWindow, xfer.InitialWindow, xfer.InitialWindow / 4},
		{xfer.InitialWindow + 1, xfer.InitialWindow, xfer.InitialWindow / 4},
		{1 << 30, xfer.InitialWindow, xfer.InitialWindow / 4},
	} {
		if got := xfer.StartCredit(tc.declared); got != tc.start {
			t.Errorf("StartCredit(%d) = %d; want %d", tc.declared, got, tc.start)
		}
		if got := xfer.Quantum(tc.declared); got != tc.quantum {
			t.Errorf("Quantum(%d) = %d; want %d", tc.declared, got, tc.quantum)
		}
	}
	// A frame is the quantum (at least MinFrame), never above the limit.
	for _, tc := range []struct {
		declared, limit, frame int64
	}{
		{64 << 20, 1 << 20, 1<<20 - xfer.Prefix},
		{64 << 20, 8 << 20, 1 << 20},
		{64 << 10, 1 << 20, xfer.MinFrame},
		{1 << 20, 1 << 20, 256 << 10},
		{64 << 20, 1024, 1024 - xfer.Prefix},
	} {
		if got := xfer.FrameCap(tc.declared, tc.limit); got != tc.frame {
			t.Errorf("FrameCap(%d, %d) = %d; want %d", tc.declared, tc.limit, got, tc.frame)
		}
	}
	// All of a small buffer; otherwise at least the quantum.
	if got := xfer.MinSend(64<<20, 100); got != 100 {
		t.Errorf("MinSend(100 buffered) = %d; want 100", got)
	}
	if got := xfer.MinSend(64<<20, 1<<20); got != xfer.InitialWindow/4 {
		t.Errorf("MinSend(a MiB buffered) = %d; want %d", got, xfer.InitialWindow/4)
	}
}

// The window grows (Growth times) only when the responder reports a stall at what was
// received and the reader keeps up; once per credit granted with the
// current window; never past the declared window; a slow reader never
// widens it. Here every growth pays (the delivery rate rises with the
// window, as on a long path).
func TestWindowStalled(t *testing.T) {
	const mib = 1 << 20
	t0 := time.Unix(1000, 0)
	w := xfer.NewWindow(64 * mib)
	if w.Cur != 4*mib || w.Max != 64*mib {
		t.Fatalf("NewWindow(64 MiB) = %+v", w)
	}
	w.Start(t0)
	for _, tc := range []struct {
		name                string
		off, recv, consumed int64
		at                  time.Duration // since the start
		grow                bool
		cur                 int64
	}{
		{"a stall ahead of what was received", 5 * mib, 4 * mib, 4 * mib, 40 * time.Millisecond, false, 4 * mib},
		{"the reader behind by more than half", 4 * mib, 4 * mib, 2*mib - 1, 40 * time.Millisecond, false, 4 * mib},
		{"the reader behind by half", 4 * mib, 4 * mib, 2 * mib, 40 * time.Millisecond, true, 16 * mib}, // 100 MiB/s
		{"a stall within the credit granted at the growth", 18*mib - 1, 18*mib - 1, 18*mib - 1, 80 * time.Millisecond, false, 16 * mib},
		{"a stall past it", 18 * mib, 18 * mib, 18 * mib, 80 * time.Millisecond, true, 64 * mib}, // 350 MiB/s since
		{"at the declared window", 90 * mib, 90 * mib, 90 * mib, 200 * time.Millisecond, false, 64 * mib},
	} {
		if got := w.Stalled(tc.off, tc.recv, tc.consumed, t0.Add(tc.at)); got != tc.grow || w.Cur != tc.cur {
			t.Errorf("%s: Stalled = %v, window %d; want %v, %d", tc.name, got, w.Cur, tc.grow, tc.cur)
		}
	}
	// A declared window up to InitialWindow is fixed.
	small := xfer.NewWindow(64 << 10)
	small.Start(t0)
	if small.Stalled(64<<10, 64<<10, 64<<10, t0.Add(time.Second)) || small.Cur != 64<<10 {
		t.Errorf("a 64 KiB window grew: %+v", small)
	}
	// A window that is not a power of two stops at the declared one.
	odd := xfer.NewWindow(5 * mib)
	odd.Start(t0)
	if !odd.Stalled(4*mib, 4*mib, 4*mib, t0.Add(time.Second)) || odd.Cur != 5*mib {
		t.Errorf("a 5 MiB window after growing: %+v", odd)
	}
}

// A growth that does not raise the delivery rate by FullGain (a path
// whose own pace bounds the transfer: a busy server, a slow link) ends
// the window's growth, at the size it has; one that does lets it grow
// again. The rate is measured from the stream's start to the first
// growth, then from each growth to the next stall past its credit.
func TestWindowFullPipe(t *testing.T) {
	const mib = 1 << 20
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		// the second stall (past the 16 MiB credit) comes at this time,
		// having received 20 MiB: the first came at 10 ms with 4 MiB
		// (400 MiB/s).
		second time.Duration
		grow   bool
		cur    int64
	}{
		{"no faster (400 MiB/s)", 10*ms + 40*ms, false, 16 * mib},
		{"a fifth faster (480 MiB/s)", 10*ms + 33*ms + ms/3, false, 16 * mib},
		{"a quarter faster (500 MiB/s)", 10*ms + 32*ms, true, 64 * mib},
		{"twice as fast (800 MiB/s)", 10*ms + 20*ms, true, 64 * mib},
	} {
		w := xfer.NewWindow(64 * mib)
		w.Start(t0)
		if !w.Stalled(4*mib, 4*mib, 4*mib, t0.Add(10*ms)) || w.Cur != 16*mib {
			t.Fatalf("%s: the first stall did not grow the window: %+v", tc.name, w)
		}
		if got := w.Stalled(20*mib, 20*mib, 20*mib, t0.Add(tc.second)); got != tc.grow || w.Cur != tc.cur {
			t.Errorf("%s: Stalled = %v, window %d MiB; want %v, %d MiB", tc.name, got, w.Cur>>20, tc.grow, tc.cur>>20)
		}
		if tc.grow {
			continue
		}
		// Full: no later stall widens it, however fast.
		if w.Stalled(40*mib, 40*mib, 40*mib, t0.Add(tc.second+ms)) || w.Cur != 16*mib {
			t.Errorf("%s: a full window grew again: %+v", tc.name, w)
		}
	}
	// At the declared window nothing grows, paid or not.
	w := xfer.NewWindow(16 * mib)
	w.Start(t0)
	w.Stalled(4*mib, 4*mib, 4*mib, t0.Add(10*ms))
	if w.Stalled(20*mib, 20*mib, 20*mib, t0.Add(50*ms)) || w.Cur != 16*mib {
		t.Errorf("a 16 MiB window whose growth did not pay: %+v", w)
	}
}

// The digest of pieces added in order is the digest of their
// concatenation, whatever their sizes (more than the queue holds at once
// included), for each kind (computed here by the hash packages
// themselves); Hashed reaches the total.
func TestDigest(t *testing.T) {
	var all []byte
	for i := range 1000 {
		all = append(all, bytes.Repeat([]byte{byte(i)}, i%97)...)
	}
	sha, hw := sha256.Sum256(all), highwayhash.Sum(all, xfer.HighwayKey[:])
	shaNil, hwNil := sha256.Sum256(nil), highwayhash.Sum(nil, xfer.HighwayKey[:])
	for _, tc := range []struct {
		alg         byte
		want, empty []byte
	}{
		{xfer.DigestSHA256, sha[:], shaNil[:]},
		{xfer.DigestHighway, hw[:], hwNil[:]},
		{99, sha[:], shaNil[:]}, // a kind this version does not know: SHA-256
	} {
		t.Run(xfer.DigestName(tc.alg), func(t *testing.T) {
			d := xfer.NewDigest(tc.alg)
			for i := range 1000 {
				d.Add(nil) // an empty piece: nothing
				d.Add(bytes.Repeat([]byte{byte(i)}, i%97))
			}
			got := d.Sum([]byte("prefix"))
			if !bytes.Equal(got, append([]byte("prefix"), tc.want...)) {
				t.Fatalf("Sum = %x; want prefix + %x", got, tc.want)
			}
			if len(tc.want) != xfer.DigestSize {
				t.Errorf("digest of %d bytes; an end frame carries %d", len(tc.want), xfer.DigestSize)
			}
			if h := d.Hashed(); h != int64(len(all)) {
				t.Errorf("Hashed = %d; want %d", h, len(all))
			}
			if again := d.Sum(nil); !bytes.Equal(again, tc.want) {
				t.Errorf("a second Sum = %x", again)
			}
			d.Add([]byte("late")) // after Sum: nothing
			d.Stop()
			if again := d.Sum(nil); !bytes.Equal(again, tc.want) {
				t.Errorf("Sum after Add and Stop = %x", again)
			}
			// Nothing added: the digest of nothing, no goroutine.
			if got := xfer.NewDigest(tc.alg).Sum(nil); !bytes.Equal(got, tc.empty) {
				t.Errorf("empty Sum = %x", got)
			}
		})
	}
	if bytes.Equal(sha[:], hw[:]) {
		t.Error("SHA-256 and HighwayHash-256 agree")
	}
	if xfer.NewHash(99) != nil {
		t.Error("NewHash of an unknown kind is not nil")
	}
}

// Stop from other goroutines while pieces are added ends the digest:
// Add never blocks for good, Sum reports nil when pieces were left
// unhashed, and Stop may come any number of times.
func TestDigestStop(t *testing.T) {
	for range 50 {
		d := xfer.NewDigest(xfer.DigestHighway)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(d.Stop)
		}
		p := make([]byte, 4096)
		for range 2000 {
			d.Add(p)
		}
		wg.Wait()
		if sum := d.Sum(nil); sum != nil && d.Hashed() != 2000*4096 {
			t.Fatalf("Sum after Stop = %x with %d of %d bytes hashed", sum, d.Hashed(), 2000*4096)
		}
	}
}

// A wait for credit is reported only on a long path, and only when it is a
// quarter of a round trip or more.
func TestStall(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		wait, rtt time.Duration
		want      bool
	}{
		{10 * ms, 0, false},                 // no round trip measured yet
		{10 * ms, xfer.LongPath - 1, false}, // a short path: the start window suffices
		{xfer.LongPath / 4, xfer.LongPath, true},
		{xfer.LongPath/4 - 1, xfer.LongPath, false},
		{5 * ms, 20 * ms, true},
		{4 * ms, 20 * ms, false},
		{time.Second, 20 * ms, true},
	} {
		if got := xfer.Stall(tc.wait, tc.rtt); got != tc.want {
			t.Errorf("Stall(wait %v, rtt %v) = %v; want %v", tc.wait, tc.rtt, got, tc.want)
		}
	}
}
