package claimcheck

import "bytes"

// readAll reads the whole payload. It keeps the chunks as nats.go
// delivered them and joins them only once every chunk has arrived and
// their total is the declared size, so it never allocates more than it
// has received (a claim check whose metadata declares a size its chunks
// do not have fails before anything of the declared size is allocated).
//
// The digest is computed on another goroutine as chunks arrive, so that
// receiving them does not wait for hashing and the join overlaps the
// hashing of the last chunks; the payload is returned only once every
// chunk is hashed and the digest matches. On every return that goroutine
// has finished: nothing reads the chunks after readAll returns.
func (r *objReader) readAll() ([]byte, error) {
	if r.info.Size == 0 {
		if err := r.finish(); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	// A full queue holds the receiver back; it holds every chunk anyway.
	queue := make(chan []byte, min(r.info.Chunks, maxReadWindow))
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		for p := range queue {
			r.digest.Write(p)
		}
	}()
	var parts [][]byte
	for !r.done {
		data, err := r.receive()
		if err != nil {
			close(queue)
			<-hashed
			return nil, r.wrap(err)
		}
		parts = append(parts, data)
		queue <- data
	}
	close(queue)
	// receive checked that the chunks hold no more than the declared size;
	// check that they hold no less before allocating the joined payload.
	if err := r.checkSize(); err != nil {
		<-hashed
		return nil, err
	}
	var buf []byte
	if len(parts) == 1 {
		buf = parts[0]
	} else {
		// bytes.Join does not zero the buffer before copying into it.
		buf = bytes.Join(parts, nil)
	}
	<-hashed
	if err := r.checkDigest(); err != nil {
		return nil, err
	}
	return buf, nil
}
