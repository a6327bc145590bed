package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// A journal at start: its file is locked (or created durably), its records are replayed into the
// store, and a torn tail is cut off.

// open locks the file (creating it durably if there is none), replays it into s, cuts off a torn
// tail, and compacts the file if it is past its bound, as after every write.
func (j *journal) open(s *userStore) (err error) {
	folder := filepath.Dir(j.path)
	info, err := os.Stat(folder)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && !info.IsDir():
		return fmt.Errorf("-data %s: there is no folder %s: create it, or name a file in another one", j.path, folder)
	case err != nil:
		return fmt.Errorf("-data %s: %w", j.path, err)
	}
	unlock, err := lockFile(j.path + ".lock")
	if err != nil {
		return err
	}
	file, err := j.openFile()
	if err != nil {
		unlock()
		return err
	}
	j.file, j.unlock = file, unlock
	defer func() {
		if err != nil { // the file now, which a compaction may have replaced
			j.file.Close()
			j.unlock()
		}
	}()
	goodSize, err := replay(file, j.path, s)
	if err != nil {
		return err
	}
	end, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if goodSize < end { // what a crash or a power loss left after the last record: never acknowledged
		j.log.Warn("journal: dropping a torn tail", "file", j.path, "offset", goodSize, "bytes", end-goodSize)
		if err := file.Truncate(goodSize); err != nil {
			return err
		}
		if err := file.Sync(); err != nil {
			return err
		}
	}
	os.Remove(j.path + ".compacting") // what a crash during a compaction may have left
	j.size = goodSize
	lines, err := compacted(s.snapshot())
	if err != nil {
		return err
	}
	j.live = int64(len(lines))
	if err := j.compactIfDue(s); err != nil { // a journal that cannot be compacted stops the start
		return fmt.Errorf("compacting %s: %w", j.path, err)
	}
	return nil
}

// openFile opens the journal's file, or creates it. A file's fsync does not make its name
// durable, so a new file's folder is synced too: else a power loss could take the file away,
// and with it the writes acknowledged in it.
func (j *journal) openFile() (*os.File, error) {
	file, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND, 0)
	if !errors.Is(err, fs.ErrNotExist) {
		return file, err
	}
	file, err = os.OpenFile(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := j.syncFolder(filepath.Dir(j.path)); err != nil {
		file.Close()
		return nil, fmt.Errorf("creating %s: its folder could not be synced, so the file might not survive a power loss: %w", j.path, err)
	}
	return file, nil
}

// replay applies every line that ends in a newline and returns where they end. A damaged line
// stops the start: better than serving data that is not what was acknowledged.
func replay(file io.Reader, path string, s *userStore) (goodSize int64, err error) {
	reader := bufio.NewReaderSize(file, 1<<20)
	r := &replayer{store: s}
	for r.line = 1; ; r.line++ {
		text, err := reader.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if !isTornTail(text) {
				return goodSize, fmt.Errorf("%s:%d: this is not a journal, so the server will not start", path, r.line)
			}
			return goodSize, nil
		}
		if err != nil {
			return goodSize, err
		}
		if err := r.apply(text); err != nil {
			return goodSize, fmt.Errorf("%s:%d: the journal is damaged, so the server will not start: %v", path, r.line, err)
		}
		goodSize += int64(len(text))
	}
}

// isTornTail reports whether what follows the last newline is what a crash or a power loss leaves
// there: the beginning of a record, NUL bytes (a power loss can leave the file's last block
// zero-filled), or both. Anything else means the file is not a journal, and it is refused, not cut.
func isTornTail(tail []byte) bool {
	tail = bytes.TrimRight(tail, "\x00")
	prefix := []byte(`{"op":"`)
	return bytes.HasPrefix(tail, prefix) || bytes.HasPrefix(prefix, tail)
}

// A replayer applies the lines of a journal to a store, one at a time. It checks what the store
// needs to be sound, never the API's field rules: a journal this service wrote starts whatever a
// later version of those rules, or of Go's net/mail, would say of its users.
type replayer struct {
	store    *userStore
	line     int   // the number of the line being replayed, from 1
	newestID int64 // the largest id a put has created so far
}

// apply applies one line: a record of a known op, with the fields its op needs and no other.
func (rp *replayer) apply(line []byte) error {
	r, err := decodeRecord(line)
	if err != nil {
		return fmt.Errorf("not a journal record: %v", err)
	}
	s := rp.store
	switch {
	case r.Op == "next_id" && rp.line != 1:
		return errors.New("next_id may only be the first record (compaction writes it there)")
	case r.Op == "next_id" && (r.ID == 0 || r.ID > math.MaxInt64+1):
		return fmt.Errorf("next_id must be from 1 to %d", uint64(math.MaxInt64)+1)
	case r.Op == "next_id":
		s.giveIDsUpTo(int64(r.ID - 1))
		return nil
	case r.ID == 0 || r.ID > math.MaxInt64:
		return fmt.Errorf("the id must be from 1 to %d", math.MaxInt64)
	}
	id := int64(r.ID)
	before, err := s.get(id)
	existed := err == nil
	switch {
	case r.Op == "delete" && !existed:
		return fmt.Errorf("deletes user %d, which does not exist", id)
	case r.Op == "delete":
		s.apply(change{id: id, before: &before})
		return nil
	case r.Op != "put":
		return fmt.Errorf("unknown op %q", r.Op)
	case r.Name == nil || r.Email == nil:
		return errors.New("a put needs name and email")
	case !existed && id <= rp.newestID:
		return fmt.Errorf("user %d is created out of order: ids are given once, in increasing order", id)
	}
	if owner, taken := s.emailOwner(*r.Email); taken && owner != id {
		return fmt.Errorf("user %d has the e-mail of user %d", id, owner)
	}
	after := user{ID: id, Name: *r.Name, Email: *r.Email}
	c := change{id: id, after: &after}
	if existed {
		c.before = &before
	} else {
		rp.newestID = id
	}
	s.apply(c)
	return nil
}

// decodeRecord reads a line as one record, and refuses what encoding/json would let through
// quietly: a member whose name differs but in case, which it matches to a field, and a member
// given twice, whose last value it keeps.
func decodeRecord(line []byte) (record, error) {
	var r record
	decoder := json.NewDecoder(bytes.NewReader(line))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&r); err != nil {
		return r, err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return r, errors.New("something follows the JSON object")
	}
	members := json.NewDecoder(bytes.NewReader(line))
	members.Token() // the object's opening brace: the object decoded above
	seen := map[string]bool{}
	for members.More() {
		token, _ := members.Token()
		name, _ := token.(string)
		switch {
		case name != "op" && name != "id" && name != "name" && name != "email":
			return r, fmt.Errorf("unknown field %q: a record has op, id, name and email", name)
		case seen[name]:
			return r, fmt.Errorf("the member %q appears twice", name)
		}
		seen[name] = true
		var value json.RawMessage
		members.Decode(&value)
	}
	return r, nil
}
