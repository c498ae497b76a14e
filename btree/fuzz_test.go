package btree

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/store"
)

// FuzzTree decodes the input into operations (three bytes each: opcode,
// key, value length) and checks every result against a map. Keys vary in
// length with the key byte, so nodes hold entries of many sizes; the pool is
// the smallest allowed, so pages are evicted and re-read.
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 2, 20, 3, 1, 0, 4, 0, 0})
	f.Add([]byte{0, 0, 5, 0, 1, 5, 5, 0, 1, 5, 0, 2, 4, 0, 0, 2, 0, 0, 3, 0, 0})
	f.Add(bytes.Repeat([]byte{0, 7, 255, 1, 9, 200, 2, 7, 0}, 40))
	f.Add(bytes.Repeat([]byte{0, 3, 250, 0, 200, 250, 0, 100, 250, 2, 3, 0, 2, 100, 0}, 30))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*600 {
			return
		}
		st, err := store.OpenPebble(store.PebbleOptions{PageSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		pool, err := cache.NewPool(st, &cache.Options{PoolSize: cache.MinFrames * 4096, Policy: cache.PolicyLRU}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Create(nil, pool, 1)
		if err != nil {
			t.Fatal(err)
		}
		md := model{}
		for i := 0; i+3 <= len(ops); i += 3 {
			op, kb, vl := ops[i], ops[i+1], int(ops[i+2])*3
			// Key byte 0 is the empty key; others vary in length with it.
			key := []byte{}
			if kb != 0 {
				key = fmt.Appendf(nil, "%03d%s", kb, bytes.Repeat([]byte{'.'}, int(kb)))
			}
			val := bytes.Repeat([]byte{byte(i)}, vl)
			_, present := md[string(key)]
			switch op % 6 {
			case 0:
				err := tr.Insert(nil, key, val)
				if present != errors.Is(err, ErrDuplicateKey) || (!present && err != nil) {
					t.Fatalf("op %d insert %q present=%v err=%v", i/3, key, present, err)
				}
				if !present {
					md[string(key)] = string(val)
				}
			case 1:
				if err := tr.Put(nil, key, val); err != nil {
					t.Fatalf("op %d put %q: %v", i/3, key, err)
				}
				md[string(key)] = string(val)
			case 2:
				err := tr.Delete(nil, key)
				if present != (err == nil) || (!present && !errors.Is(err, ErrKeyNotFound)) {
					t.Fatalf("op %d delete %q present=%v err=%v", i/3, key, present, err)
				}
				delete(md, string(key))
			case 3:
				v, found, err := tr.Get(nil, key, nil)
				if err != nil || found != present || (found && string(v) != md[string(key)]) {
					t.Fatalf("op %d get %q: found=%v err=%v", i/3, key, found, err)
				}
			case 4:
				lo, hi := Incl(key), Bound{}
				it := tr.NewIter(nil, &IterOptions{Lower: lo, Upper: hi})
				var got []string
				for ok := it.Last(); ok; ok = it.Prev() {
					got = append(got, string(it.Key()))
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
				var want []string
				keys := md.sorted()
				for j := len(keys) - 1; j >= 0; j-- {
					if keys[j] >= string(key) {
						want = append(want, keys[j])
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("op %d reverse scan from %q: got %v want %v", i/3, key, got, want)
				}
			case 5:
				// Forward, up to the key, exclusive when the value byte
				// is odd.
				hi := Incl(key)
				if vl%2 == 1 {
					hi = Excl(key)
				}
				it := tr.NewIter(nil, &IterOptions{Upper: hi})
				var got []string
				for ok := it.First(); ok; ok = it.Next() {
					got = append(got, string(it.Key()))
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, k := range md.sorted() {
					if k < string(key) || (k == string(key) && hi.Kind == Inclusive) {
						want = append(want, k)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("op %d forward scan to %q (%v): got %q want %q", i/3, key, hi.Kind, got, want)
				}
			}
		}
		shape, err := tr.Check(nil)
		if err != nil {
			t.Fatal(err)
		}
		if shape.Entries != len(md) {
			t.Fatalf("tree has %d entries, model %d", shape.Entries, len(md))
		}
	})
}
