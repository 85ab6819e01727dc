package s3tables_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/cache"
	s3tables "github.com/sstkit/sstable/examples/s3"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// The gateway's own credentials, for this test only.
const (
	accessKey  = "sstable-test"
	secretKey  = "sstable-test-secret-key"
	bucketName = "tables"
)

// findGateway returns the versitygw binary: on PATH, or in $GOPATH/bin
// where `go install` puts it. Without one the test skips, unless
// SSTABLE_REQUIRE_S3=1 (as .ci/run sets), when it fails.
func findGateway(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			p := filepath.Join(dir, "bin", "versitygw")
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	msg := "versitygw not found on PATH or in $(go env GOPATH)/bin; install it with: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"
	if os.Getenv("SSTABLE_REQUIRE_S3") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// gateway is a versitygw process serving S3 on a loopback port from a
// directory of its own (each top-level directory a bucket).
type gateway struct {
	bin, root, addr string
	log             *os.File
	cmd             *exec.Cmd
	wait            chan error // the process's exit status, once it exits
}

func newGateway(t *testing.T) *gateway {
	t.Helper()
	g := &gateway{bin: findGateway(t), root: filepath.Join(t.TempDir(), "root")}
	if err := os.Mkdir(g.root, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = l.Addr().String()
	l.Close()
	if g.log, err = os.Create(filepath.Join(t.TempDir(), "versitygw.log")); err != nil {
		t.Fatal(err)
	}
	g.start(t)
	t.Cleanup(func() {
		g.stop()
		g.log.Close()
	})
	return g
}

// start runs the gateway and waits until it accepts connections.
func (g *gateway) start(t *testing.T) {
	t.Helper()
	g.cmd = exec.Command(g.bin, "--port", g.addr, "posix", g.root)
	g.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+accessKey, "ROOT_SECRET_KEY="+secretKey)
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- g.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", g.addr, time.Second); err == nil {
			c.Close()
			g.wait = exited
			return
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(g.log.Name())
			t.Fatalf("versitygw exited: %v\n%s", err, log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			t.Fatal("versitygw did not accept connections within 30 s")
		}
	}
}

// stop kills the gateway, by its process id, and waits for it to exit.
func (g *gateway) stop() {
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	g.cmd.Process.Kill()
	if g.wait != nil {
		<-g.wait
	}
	g.cmd, g.wait = nil, nil
}

// bucket returns the gateway's bucket of tables
// (created if need be). The SDK tries a request twice at most, so that a
// stopped gateway fails reads quickly.
func (g *gateway) bucket(t *testing.T) *blob.Bucket {
	t.Helper()
	ctx := context.Background()
	client := s3tables.NewClient(s3tables.Config{
		Endpoint: "http://" + g.addr, AccessKey: accessKey, SecretKey: secretKey,
		PathStyle: true, MaxAttempts: 2,
	})
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucketName)}); err != nil && !strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") {
		t.Fatalf("CreateBucket: %v", err)
	}
	b, err := s3tables.OpenBucket(ctx, client, bucketName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// key i of a table of n: 16 bytes, sorted, random-looking; absent(j) is
// never present (odd last byte).
func key(i int) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(i)*0x9e3779b9)
	return binary.BigEndian.AppendUint64(k, (uint64(i)*0x2545f4914f6cdd1d)&^1)
}

func absent(j int) []byte {
	k := key(j)
	k[15] |= 1
	return k
}

func value(i int) []byte {
	return fmt.Appendf(nil, "value %08d %0*x", i, 80, uint64(i)*0x9e3779b97f4a7c15)
}

// buildTable writes a table of n entries with opts to dir and returns
// its path.
func buildTable(t *testing.T, dir string, n int, opts *builder.Options) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("%d-hash%v.sst", n, opts.HashIndex))
	b, err := builder.Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := b.Add(key(i), value(i)); err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return path
}

// counting is an io.ReaderAt over a local file that counts the calls and
// bytes, as blobra.ReaderAt does over the bucket.
type counting struct {
	r            io.ReaderAt
	mu           sync.Mutex
	calls, bytes int64
}

func (c *counting) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	c.calls++
	c.bytes += int64(len(p))
	c.mu.Unlock()
	return c.r.ReadAt(p, off)
}

func (c *counting) take() (int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls, bytes := c.calls, c.bytes
	c.calls, c.bytes = 0, 0
	return calls, bytes
}

// TestS3MatchesLocal uploads tables (10k entries, one-level; 200k, the
// builder's default partitioned layout; 200k with a hash index) to the
// gateway and reads each through S3 and from the local file, each with
// a new reader and cache per step: open, a cold Get of present and
// absent keys, 200 Gets on one reader, and a bounded scan of 5000
// entries from a random key give the same answers and make the same
// number of reads of the same bytes.
func TestS3MatchesLocal(t *testing.T) {
	g := newGateway(t)
	bucket := g.bucket(t)
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		n    int
		opts builder.Options
	}{
		{"10k-default", 10_000, builder.Options{}},
		{"200k-default", 200_000, builder.Options{}},
		{"200k-hash", 200_000, builder.Options{HashIndex: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := buildTable(t, dir, tc.n, &tc.opts)
			objKey := "t/" + tc.name + ".sst"
			start := time.Now()
			if err := s3tables.Upload(ctx, bucket, objKey, path); err != nil {
				t.Fatal(err)
			}
			upload := time.Since(start)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			local := &counting{r: f}

			type step struct {
				name         string
				calls, bytes [2]int64 // S3, local
				wall         time.Duration
			}
			var steps []step
			rng := rand.New(rand.NewPCG(uint64(tc.n), 3))
			// run does op on a new reader of each source, with a cache of
			// its own, and checks the two agree.
			run := func(name string, op func(r *reader.Reader) (string, error)) {
				var s step
				s.name = name
				var answers [2]string
				for i := range 2 {
					c, err := cache.New(64 << 20)
					if err != nil {
						t.Fatal(err)
					}
					var r *reader.Reader
					var take func() (int64, int64)
					t0 := time.Now()
					if i == 0 {
						var ra interface {
							Calls() int64
							Bytes() int64
							ResetCounts()
						}
						r, ra, err = s3tables.Open(ctx, bucket, objKey, &reader.Options{Cache: c})
						take = func() (int64, int64) {
							if ra == nil {
								return 0, 0
							}
							calls, bytes := ra.Calls(), ra.Bytes()
							ra.ResetCounts()
							return calls, bytes
						}
					} else {
						r, err = reader.New(local, st.Size(), &reader.Options{Cache: c})
						take = local.take
					}
					if err != nil {
						t.Fatalf("%s: open: %v", name, err)
					}
					if op == nil {
						answers[i] = "opened"
					} else if answers[i], err = op(r); err != nil {
						t.Fatalf("%s (source %d): %v", name, i, err)
					}
					if i == 0 {
						s.wall = time.Since(t0)
					}
					s.calls[i], s.bytes[i] = take()
					r.Close()
					c.Close()
				}
				if answers[0] != answers[1] {
					t.Errorf("%s: S3 answered %q, the local file %q", name, answers[0], answers[1])
				}
				if s.calls[0] != s.calls[1] || s.bytes[0] != s.bytes[1] {
					t.Errorf("%s: S3 %d reads of %d bytes, the local file %d of %d", name, s.calls[0], s.bytes[0], s.calls[1], s.bytes[1])
				}
				steps = append(steps, s)
			}
			get := func(r *reader.Reader, i int) (string, error) {
				v, err := r.Get(key(i))
				if err != nil {
					return "", err
				}
				if !bytes.Equal(v, value(i)) {
					return "", fmt.Errorf("Get(key %d) = %q", i, v)
				}
				return string(v), nil
			}
			run("open", nil)
			i := rng.IntN(tc.n)
			run("open + cold Get, present", func(r *reader.Reader) (string, error) { return get(r, i) })
			j := rng.IntN(tc.n)
			run("open + cold Get, absent", func(r *reader.Reader) (string, error) {
				if _, err := r.Get(absent(j)); !errors.Is(err, reader.ErrNotFound) {
					return "", fmt.Errorf("Get(absent %d): %v", j, err)
				}
				return "not found", nil
			})
			keys := make([]int, 200)
			for k := range keys {
				keys[k] = rng.IntN(tc.n)
			}
			run("open + 200 Gets, present", func(r *reader.Reader) (string, error) {
				for _, i := range keys {
					if _, err := get(r, i); err != nil {
						return "", err
					}
				}
				return "all found", nil
			})
			from := rng.IntN(tc.n - 5000)
			run("open + scan of 5000 entries", func(r *reader.Reader) (string, error) {
				it := r.NewIterator()
				defer it.Close()
				n := 0
				for ok := it.SeekGE(key(from)); ok && n < 5000; ok = it.Next() {
					if !bytes.Equal(it.Key(), key(from+n)) || !bytes.Equal(it.Value(), value(from+n)) {
						return "", fmt.Errorf("scan entry %d: %x", n, it.Key())
					}
					n++
				}
				if err := it.Err(); err != nil {
					return "", err
				}
				return fmt.Sprint(n, " entries"), nil
			})
			t.Logf("%s: %d entries, %.1f MB, uploaded in %v", tc.name, tc.n, float64(st.Size())/1e6, upload.Round(time.Millisecond))
			for _, s := range steps {
				t.Logf("| %s | %d | %d | %v |", s.name, s.calls[0], s.bytes[0], s.wall.Round(100*time.Microsecond))
			}
		})
	}
}

// TestS3GatewayKilledMidScan kills the gateway in the middle of a scan of
// a 200k-entry table (16 MB, partitioned by default): the scan ends with
// an error, never with a wrong or missing entry passed off as the end;
// after a restart of the gateway on the same port and directory, the same
// reader looks keys up and scans the whole table correctly.
func TestS3GatewayKilledMidScan(t *testing.T) {
	g := newGateway(t)
	bucket := g.bucket(t)
	ctx := context.Background()
	const n = 200_000
	path := buildTable(t, t.TempDir(), n, &builder.Options{})
	if err := s3tables.Upload(ctx, bucket, "kill.sst", path); err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, _, err := s3tables.Open(ctx, bucket, "kill.sst", &reader.Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	it := r.NewIterator()
	i := 0
	killedAt := -1
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), key(i)) || !bytes.Equal(it.Value(), value(i)) {
			t.Fatalf("scan entry %d: %x = %q, want key %d", i, it.Key(), it.Value(), i)
		}
		i++
		if i == 30_000 {
			g.stop()
			killedAt = i
		}
	}
	scanErr := it.Err()
	it.Close()
	if killedAt < 0 {
		t.Fatal("the scan ended before the gateway was stopped")
	}
	if scanErr == nil {
		t.Fatalf("scan with the gateway killed after %d entries: %d entries and no error, want an error", killedAt, i)
	}
	if i >= n {
		t.Fatalf("scan read all %d entries with the gateway killed", i)
	}
	if errors.Is(scanErr, format.ErrCorrupt) {
		t.Fatalf("scan with the gateway killed: %v, a failed request reported as corruption", scanErr)
	}
	t.Logf("gateway killed after %d entries; the scan stopped at %d with: %v", killedAt, i, scanErr)
	// Lookups fail too while it is down, unless their blocks are cached.
	if _, err := r.Get(key(n - 7)); err == nil {
		t.Logf("Get of the last block's key succeeded from the cache with the gateway down")
	} else if errors.Is(err, reader.ErrNotFound) {
		t.Fatalf("Get with the gateway down: %v, want a read error", err)
	}

	g.start(t)
	for _, i := range []int{0, 12345, n / 2, n - 7} {
		v, err := r.Get(key(i))
		if err != nil || !bytes.Equal(v, value(i)) {
			t.Fatalf("Get(key %d) after the restart = %q, %v", i, v, err)
		}
	}
	it = r.NewIterator()
	defer it.Close()
	i = 0
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), key(i)) || !bytes.Equal(it.Value(), value(i)) {
			t.Fatalf("scan after the restart, entry %d: %x", i, it.Key())
		}
		i++
	}
	if err := it.Err(); err != nil || i != n {
		t.Fatalf("scan after the restart: %d of %d entries, %v", i, n, err)
	}
}
