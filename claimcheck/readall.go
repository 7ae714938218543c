package claimcheck

// readAll reads the whole payload. The chunks are hashed on another
// goroutine as they arrive and copied into the payload's buffer by the
// receiving one (next asks for the following batch as soon as one has
// arrived), so that hashing and copying run side by side, chunk by chunk
// while each is still in the cache, and are done by the time the last
// one arrives; the payload is returned only once every chunk is hashed
// and copied, the total is the declared size and the digest matches. On
// every return the hashing goroutine has finished: nothing reads the
// chunks after readAll returns.
//
// readAll never allocates more than twice what it has received: the
// buffer of the declared size is allocated only once half of it has
// arrived (see joiner), so a claim check whose metadata declares a size
// its chunks do not have fails before anything that large is allocated.
func (r *objReader) readAll() ([]byte, error) {
	if r.info.Size == 0 {
		if err := r.finish(); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	// A full queue holds the receiver back; the joiner holds what it has
	// been given anyway.
	queue := make(chan []byte, min(r.info.Chunks, maxReadWindow))
	j := joiner{size: int(r.info.Size)}
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		for p := range queue {
			r.digest.Write(p)
		}
	}()
	for !r.done {
		data, err := r.next(true)
		if err != nil {
			close(queue)
			<-hashed
			return nil, r.wrap(err)
		}
		queue <- data
		j.add(data) // read-only, as the hashing is
	}
	close(queue)
	<-hashed
	// accept checked that the chunks hold no more than the declared size;
	// finish checks that they hold no less, and the digest.
	if err := r.finish(); err != nil {
		return nil, err
	}
	return j.bytes(), nil
}

// joiner assembles a payload of a declared size from its chunks, which
// never hold more than that in total (accept checks). It keeps the first
// chunks as they are until half the declared size has arrived, then
// allocates the payload's buffer once, copies them into it and copies
// every later chunk as it is added, letting go of each. A payload of one
// chunk is that chunk's buffer itself: nothing is copied.
type joiner struct {
	size int      // the declared size
	held [][]byte // chunks added before buf was allocated
	n    int      // the bytes in held
	buf  []byte   // the payload so far, once allocated
}

// add appends the next chunk.
func (j *joiner) add(p []byte) {
	if len(p) == 0 {
		return // nothing to keep (only a forged object has empty chunks)
	}
	if j.buf != nil {
		j.buf = append(j.buf, p...)
		return
	}
	j.held = append(j.held, p)
	j.n += len(p)
	switch {
	case 2*j.n < j.size:
		return
	case len(j.held) == 1 && j.n == j.size:
		j.buf = p
	default:
		j.buf = make([]byte, 0, j.size)
		for _, q := range j.held {
			j.buf = append(j.buf, q...)
		}
	}
	j.held = nil
}

// bytes returns the payload; call it once every chunk has been added and
// the total has been checked against the declared size.
func (j *joiner) bytes() []byte { return j.buf }
