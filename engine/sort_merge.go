package engine

// The external merge (filesort.cc's merge_many_buff, merge_buffers,
// read_to_buffer, reuse_freed_buff and merge_index).
//
// The runs are in one temporary file. While there are more than
// MERGEBUFF2 (15) of them, a pass merges them MERGEBUFF (7) at a time
// into a second file (the last group takes what is left, up to 10), and
// the two files swap. The last pass merges the 15 or fewer left into the
// result file, writing only each record's result part: its addon
// columns, or its row reference. A merge divides the sort buffer evenly
// among its runs; each run's part is refilled from the file when it is
// used up, and a run that ends gives its part to the run whose part is
// next to it. The runs' current records are kept in a heap with the
// smallest on top (queues.c), so a merge of k runs costs about log2(k)
// comparisons a record.

// mergeRun is a run being merged: its place in the file, the records of
// it in its part of the buffer, and that part.
type mergeRun struct {
	pos      int64 // the next byte of the run in the file
	rows     int64 // records of the run not yet read
	maxKeys  int64 // records its part holds (fixed records)
	start    int   // its part of the buffer: [start, end)
	end      int
	cur      int   // the current record's offset in the buffer
	memCount int64 // records in the buffer not yet merged
}

// merge merges the runs in f and leaves the result file for the cursor.
func (s *SortCursor) merge(f *tempFile, runs []chunk) error {
	p := s.p
	// The merges use the whole buffer for records (the pointers' room
	// included): max_keys_per_buffer = sort_buffer_size / rec_length.
	maxKeys := max(int64(len(s.buf))/int64(p.recLength), 1)
	from := f
	var to *tempFile
	for len(runs) > mergeBuff2 {
		if to == nil {
			var err error
			if to, err = s.newTemp(); err != nil {
				return err
			}
		}
		to.reset()
		var next []chunk
		last := len(runs) - 1 // maxbuffer
		i := 0
		for ; i <= last-mergeBuff*3/2; i += mergeBuff {
			c, err := s.mergeBuffers(from, to, runs[i:i+mergeBuff], maxKeys, false)
			if err != nil {
				return err
			}
			next = append(next, c)
		}
		c, err := s.mergeBuffers(from, to, runs[i:], maxKeys, false)
		if err != nil {
			return err
		}
		next = append(next, c)
		if err := to.flush(); err != nil {
			return err
		}
		s.stats.MergePasses++
		s.tx.m.SortMergePasses++
		runs = next
		from, to = to, from
	}
	out, err := s.newTemp()
	if err != nil {
		return err
	}
	c, err := s.mergeBuffers(from, out, runs, maxKeys, true)
	if err != nil {
		return err
	}
	if err := out.flush(); err != nil {
		return err
	}
	s.stats.MergePasses++
	s.tx.m.SortMergePasses++
	s.out = out
	s.rd = tempReader{f: out, end: out.size}
	s.n = c.rows
	return nil
}

// mergeBuffers is merge_buffers: merge runs of from into to, whole
// records, or only their result parts when final; at most LIMIT records.
func (s *SortCursor) mergeBuffers(from, to *tempFile, runs []chunk, maxKeys int64, final bool) (chunk, error) {
	p := s.p
	m := &s.tx.m.SortCounts
	s.stats.MergeCalls++
	m.SortMergeCalls++
	buf := s.buf
	out := chunk{pos: to.size}
	maxRows := p.limit
	k := len(runs)
	maxCount := max(maxKeys/int64(k), 1)
	chunkSize := len(buf) / k
	rs := make([]*mergeRun, k)
	// The queue: runs by their current record, the smallest on top.
	q := make([]*mergeRun, 1, k+1)
	less := func(a, b *mergeRun) int { return p.compare(m, buf[a.cur:], buf[b.cur:]) }
	insert := func(r *mergeRun) {
		q = append(q, r)
		idx := len(q) - 1
		for idx>>1 > 0 && less(r, q[idx>>1]) < 0 {
			q[idx] = q[idx>>1]
			idx >>= 1
		}
		q[idx] = r
	}
	downheap := func(idx int) {
		e := q[idx]
		n := len(q) - 1
		for idx <= n>>1 {
			next := idx + idx
			if next < n && less(q[next], q[next+1]) > 0 {
				next++
			}
			if less(q[next], e) >= 0 {
				break
			}
			q[idx] = q[next]
			idx = next
		}
		q[idx] = e
	}
	for i, c := range runs {
		r := &mergeRun{pos: c.pos, rows: c.rows, maxKeys: maxCount, start: i * chunkSize, end: (i + 1) * chunkSize}
		if _, err := s.readToBuffer(from, r); err != nil {
			return out, err
		}
		r.maxKeys = r.memCount // "if less data in buffers than expected"
		rs[i] = r
		insert(r)
	}
	var written int64
	emit := func(rec []byte) error {
		n := p.recLen(rec)
		if final {
			kl := p.keyLen(rec)
			rec = rec[kl:n]
		} else {
			rec = rec[:n]
		}
		written++
		return to.write(rec)
	}
	done := false
	for len(q) > 2 && !done {
		r := q[1]
		rec := buf[r.cur:]
		if err := emit(rec); err != nil {
			return out, err
		}
		if maxRows--; maxRows == 0 {
			done = true
			break
		}
		r.cur += p.recLen(rec)
		r.memCount--
		if r.memCount == 0 {
			n, err := s.readToBuffer(from, r)
			if err != nil {
				return out, err
			}
			if n == 0 {
				// queue_remove_top, and reuse_freed_buff: the part goes to
				// the run whose part is next to it.
				q[1] = q[len(q)-1]
				q = q[:len(q)-1]
				if len(q) > 1 {
					downheapReplace(q, 1, less)
				}
				for _, o := range q[1:] {
					if o.end == r.start {
						o.end = r.end
						o.maxKeys += r.maxKeys
						break
					}
					if o.start == r.end {
						o.start = r.start
						o.maxKeys += r.maxKeys
						break
					}
				}
				continue
			}
		}
		downheap(1)
	}
	if !done && len(q) == 2 {
		// One run left: the rest of it, through the whole buffer.
		r := q[1]
		r.start, r.end, r.maxKeys = 0, len(buf), maxKeys
		for !done {
			if r.memCount > maxRows {
				r.memCount, r.rows = maxRows, 0
			}
			maxRows -= r.memCount
			for ; r.memCount > 0; r.memCount-- {
				rec := buf[r.cur:]
				if err := emit(rec); err != nil {
					return out, err
				}
				r.cur += p.recLen(rec)
			}
			if maxRows == 0 {
				break
			}
			n, err := s.readToBuffer(from, r)
			if err != nil {
				return out, err
			}
			if n == 0 {
				break
			}
		}
	}
	out.rows = min(written, p.limit)
	return out, nil
}

// downheapReplace is queues.c's queue_replace after queue_remove: the
// element moved to idx sinks, then rises (insert_at) if it must.
func downheapReplace(q []*mergeRun, idx int, less func(a, b *mergeRun) int) {
	e := q[idx]
	n := len(q) - 1
	first := true
	for idx <= n>>1 {
		next := idx + idx
		if next < n && less(q[next], q[next+1]) > 0 {
			next++
		}
		if first && less(q[next], e) >= 0 {
			q[idx] = e
			return
		}
		first = false
		q[idx] = q[next]
		idx = next
	}
	for idx>>1 > 0 && less(e, q[idx>>1]) < 0 {
		q[idx] = q[idx>>1]
		idx >>= 1
	}
	q[idx] = e
}

// readToBuffer is read_to_buffer: refill r's part of the buffer with its
// next records, as many as its part holds (fixed records), or as many
// whole ones as the bytes read hold (packed). It returns the bytes used.
func (s *SortCursor) readToBuffer(f *tempFile, r *mergeRun) (int, error) {
	p := s.p
	count := min(r.maxKeys, r.rows)
	if count <= 0 {
		return 0, nil
	}
	packed := p.packedKeys || p.packedAddons
	var want int64
	if packed {
		count = r.rows
		want = min(int64(r.end-r.start), f.size-r.pos)
	} else {
		want = int64(p.recLength) * count
	}
	region := s.buf[r.start : r.start+int(want)]
	n, err := f.readAt(region, r.pos)
	if err != nil {
		return 0, err
	}
	region = region[:n]
	used := n
	if packed {
		// The last record read is most likely cut: keep whole ones.
		off := 0
		var i int64
		for ; i < count; i++ {
			if off+keyLenField > len(region) && p.packedKeys {
				break
			}
			kl := p.fixedKeyLen
			if p.packedKeys {
				kl = p.keyLen(region[off:])
			}
			if p.packedAddons && off+kl+addonLenField > len(region) {
				break
			}
			if off+kl > len(region) {
				break
			}
			rl := kl + p.resLen(region[off+kl:])
			if off+rl > len(region) {
				break
			}
			off += rl
		}
		count, used = i, off
	}
	r.cur = r.start
	r.pos += int64(used)
	r.rows -= count
	r.memCount = count
	return used, nil
}
