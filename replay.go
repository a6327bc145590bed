package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// A journal at start: its records are replayed into the store and a torn last record is cut off.

// open replays the file, cuts off a torn last record, and compacts it if due, as every batch does.
func (j *journal) open() (err error) {
	file, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			file.Close()
		}
	}()
	goodSize, err := replay(file, j.path, j.store)
	if err != nil {
		return err
	}
	end, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if goodSize < end { // a crash cut the last record short: it was never acknowledged
		j.log.Warn("journal: dropping a torn last record", "file", j.path, "offset", goodSize, "bytes", end-goodSize)
		if err := file.Truncate(goodSize); err != nil {
			return err
		}
		if err := file.Sync(); err != nil {
			return err
		}
	}
	os.Remove(j.path + ".compacting") // what a crash during a compaction may have left
	j.file, j.size, j.live = file, goodSize, int64(len(j.compacted()))
	if err := j.compactWhenDue(); err != nil { // a journal that cannot be compacted stops the start
		j.file.Close()
		return fmt.Errorf("compacting %s: %w", j.path, err)
	}
	return nil
}

// replay applies every complete line and returns where they end. A damaged line stops the start:
// better than serving data that is not what was acknowledged.
func replay(file io.Reader, path string, store *userStore) (goodSize int64, err error) {
	reader := bufio.NewReaderSize(file, 1<<20)
	var newestID int64 // the largest id a put has created so far
	for line := 1; ; line++ {
		text, err := reader.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// What follows the last newline is a record a crash cut short, so it must look like the
			// start of one: a file that is not a journal is refused, not cut.
			prefix := []byte(`{"op":"`)
			if !bytes.HasPrefix(text, prefix) && !bytes.HasPrefix(prefix, text) {
				return goodSize, fmt.Errorf("%s:%d: this is not a journal, so the server will not start", path, line)
			}
			return goodSize, nil
		}
		if err != nil {
			return goodSize, err
		}
		if err := replayRecord(text, store, line == 1, &newestID); err != nil {
			return goodSize, fmt.Errorf("%s:%d: the journal is damaged, so the server will not start: %v", path, line, err)
		}
		goodSize += int64(len(text))
	}
}

// maxReplayID bounds ids: the store has a slot for each, so a larger one must be damage.
const maxReplayID = 1 << 31

// replayRecord applies one line, checking that this service could have written it.
func replayRecord(line []byte, store *userStore, first bool, newestID *int64) error {
	var r record
	decoder := json.NewDecoder(bytes.NewReader(line))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&r); err != nil {
		return fmt.Errorf("not a journal record: %v", err)
	}
	if _, err := decoder.Token(); err != io.EOF {
		return errors.New("not a journal record: something follows the JSON object")
	}
	before, existed := store.published(r.ID)
	switch {
	case r.ID <= 0 || r.ID > maxReplayID:
		return fmt.Errorf("the id must be a positive integer up to %d", maxReplayID)
	case r.Op == "next_id" && !first:
		return errors.New("next_id may only be the first record (compaction writes it there)")
	case r.Op == "next_id":
		store.nextID = r.ID
		return nil
	case r.Op == "delete" && !existed:
		return fmt.Errorf("deletes user %d, which does not exist", r.ID)
	case r.Op == "delete":
		store.apply(write{id: r.ID, before: before})
		return nil
	case r.Op != "put":
		return fmt.Errorf("unknown op %q", r.Op)
	case r.Name == nil || r.Email == nil:
		return errors.New("a put needs name and email")
	case !existed && (r.ID <= *newestID || r.ID > store.nextID):
		return fmt.Errorf("user %d is created out of order: ids are given once, in increasing order", r.ID)
	}
	name, problem := bodyField{given: true, text: *r.Name}.check("name", true, nameRule)
	email, emailProblem := bodyField{given: true, text: *r.Email}.check("email", true, emailRule)
	if problem = cmp.Or(problem, emailProblem); problem != "" || name != *r.Name || email != *r.Email {
		return fmt.Errorf("the user breaks the field rules: %s", cmp.Or(problem, "white space around a value"))
	}
	if owner, taken := store.byEmail[emailKey(email)]; taken && owner != r.ID {
		return fmt.Errorf("user %d has the e-mail of user %d", r.ID, owner)
	}
	if !existed {
		*newestID = r.ID
	}
	store.apply(write{id: r.ID, before: before, after: user{ID: r.ID, Name: name, Email: email}})
	return nil
}
