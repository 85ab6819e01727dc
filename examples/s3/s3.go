// Package s3tables reads sstables kept in an S3 bucket through
// gocloud.dev/blob/s3blob: a table is uploaded as one object, and read
// with reader.New over examples/blobra's io.ReaderAt, one ranged GET per
// ReadAt. Any S3-compatible server works; the tests run versitygw (an S3
// gateway over a local directory) on a loopback port.
//
// It is a module of its own, so that the sstable module does not depend
// on the Go CDK or the AWS SDK.
package s3tables

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"

	"github.com/sstkit/sstable/diskcache"
	"github.com/sstkit/sstable/examples/blobra"
	"github.com/sstkit/sstable/reader"
)

// Config names an S3 endpoint and the credentials to use there.
type Config struct {
	Endpoint  string // e.g. "http://127.0.0.1:7070"; "" means AWS's own
	Region    string // "" means us-east-1
	AccessKey string
	SecretKey string
	// PathStyle addresses buckets as endpoint/bucket/key rather than
	// bucket.endpoint/key, as most servers other than AWS need.
	PathStyle bool
	// MaxAttempts bounds the SDK's attempts per request (its retries of
	// failed requests); 0 means the SDK's default, 3.
	MaxAttempts int
}

// NewClient returns an S3 client for c.
func NewClient(c Config) *s3.Client {
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	o := s3.Options{
		Region:           region,
		Credentials:      credentials.NewStaticCredentialsProvider(c.AccessKey, c.SecretKey, ""),
		UsePathStyle:     c.PathStyle,
		RetryMaxAttempts: c.MaxAttempts,
	}
	if c.Endpoint != "" {
		o.BaseEndpoint = aws.String(c.Endpoint)
	}
	return s3.New(o)
}

// OpenBucket returns the bucket name of client as a *blob.Bucket.
func OpenBucket(ctx context.Context, client *s3.Client, name string) (*blob.Bucket, error) {
	return s3blob.OpenBucket(ctx, client, name, nil)
}

// Upload copies the local file path to the object key of bucket.
func Upload(ctx context.Context, bucket *blob.Bucket, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := bucket.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return fmt.Errorf("s3tables: upload %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("s3tables: upload %s: %w", key, err)
	}
	return nil
}

// Open opens the table stored as key in bucket (blobra.Open): one request
// for the object's size, then reader.New, whose first ReadAt reads the
// table's tail. The returned ReaderAt counts the reads.
func Open(ctx context.Context, bucket *blob.Bucket, key string, opts *reader.Options) (*reader.Reader, *blobra.ReaderAt, error) {
	return blobra.Open(ctx, bucket, key, opts)
}

// Stat returns the size in bytes and the ETag of the object key in
// bucket: one HEAD request. A store that keeps its tables' sizes and
// versions in its own manifest needs none.
func Stat(ctx context.Context, bucket *blob.Bucket, key string) (size int64, etag string, err error) {
	a, err := bucket.Attributes(ctx, key)
	if err != nil {
		return 0, "", fmt.Errorf("s3tables: stat %s: %w", key, err)
	}
	return a.Size, a.ETag, nil
}

// OpenCached opens the table stored as key in bucket, of size bytes and
// version (its ETag, from Stat or the caller's manifest), through the
// local disk cache dc: reader.New over dc.ReaderAt over a ReaderAt of the
// object, so that every byte read once, in this process or an earlier
// one that used dc's directory, is served from local disk. The returned
// ReaderAt counts the requests made to the bucket; it makes none for an
// object dc holds whole (OpenCached itself makes none either).
func OpenCached(ctx context.Context, bucket *blob.Bucket, key string, size int64, version string, dc *diskcache.Cache, opts *reader.Options) (*reader.Reader, *blobra.ReaderAt, error) {
	ra := blobra.NewReaderAt(ctx, bucket, key, size)
	r, err := reader.New(dc.ReaderAt(key+"@"+version, size, ra), size, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("s3tables: open %s: %w", key, err)
	}
	return r, ra, nil
}
