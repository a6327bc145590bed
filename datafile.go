package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"
)

// With -data FILE the store keeps a copy of its users in one JSON document that a person can read
// and edit, even while the server runs (docs/durability.md):
//
//	{
//	  "next_id": 3,
//	  "users": [
//	    {"id": 1, "name": "Ada Lovelace", "email": "ada@example.com"}
//	  ]
//	}
//
// Each write replaces the whole file, durably, before memory changes (writeDurably, durable.go).
// A person's save is told from the server's own writes by the file's stamp, and loaded before the
// next write is judged, so that no edit is lost to a write and no acknowledged write to an edit.

// errFileEdited is the error of a write refused because a person saved the data file and the save
// cannot be loaded, or saved it while the write was made: nothing changes (errorFor: 503).
var errFileEdited = errors.New("data file edit not loaded")

// errLockedByAnother is the error of a start on a data file that another server holds (lockFile).
var errLockedByAnother = errors.New("another server is using this data file")

// A dataFile is the file -data names, held by this server alone while it runs. Only the store uses
// it, under the store's lock (store.go), which guards its stamps as it guards the users.
type dataFile struct {
	path    string       // the file, its symbolic links followed: what a write replaces
	log     *slog.Logger // the file's events: an edit loaded or refused
	unlock  func()       // lets go of the lock that keeps the file to one server
	written fileStamp    // the file as the server last wrote or loaded it: any other stamp is a person's save
	seen    fileStamp    // a save the ticker saw once and has not loaded: it loads it once it stays the same
	refused *refusal     // the save that cannot be loaded, if any: writes are refused until another save
}

// A refusal is a person's save that cannot be loaded, why, and when the log last said so.
type refusal struct {
	save   fileStamp
	reason error
	logged time.Time
}

// A fileStamp is what the server notices of a file without reading it: its modification time, its
// size, and which file it is (os.SameFile), so that a file renamed into place is told from the one
// it replaced. The zero fileStamp is no file.
type fileStamp struct{ info os.FileInfo }

// stampOf returns the stamp of the file at path: the zero stamp when it cannot be looked at.
func stampOf(path string) fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{info}
}

// same reports whether two stamps are of the same file, unchanged. The one save a stamp cannot see
// is one of the same size, on the same file, within one tick of the file system's clock.
func (s fileStamp) same(other fileStamp) bool {
	if s.info == nil || other.info == nil {
		return s.info == nil && other.info == nil
	}
	return s.info.ModTime().Equal(other.info.ModTime()) && s.info.Size() == other.info.Size() && os.SameFile(s.info, other.info)
}

// fileDocument is the document in the file.
type fileDocument struct {
	NextID *uint64 `json:"next_id"` // the id the next create gets; nil when a person left it out
	Users  []user  `json:"users"`
}

// fileContents are what a data file holds, once checked: its users in id order, and the largest
// id ever given.
type fileContents struct {
	users  []user
	lastID int64
}

// openDataFile locks the data file at path for this server and reads it: no users when its
// folder has no such file. It then writes the file once, as every write will, so that a file the
// server cannot replace stops the start rather than the first write. A file the store cannot trust
// is refused, and left as it is.
func openDataFile(path string, log *slog.Logger) (*dataFile, fileContents, error) {
	path, err := followLinks(path)
	if err != nil {
		return nil, fileContents{}, err
	}
	folder := filepath.Dir(path)
	if info, err := os.Stat(folder); err != nil || !info.IsDir() {
		return nil, fileContents{}, withAdvice(fmt.Errorf("-data %s: no folder %s", path, folder), "create the folder, or name a file in another one")
	}
	unlock, err := lockFile(path + ".lock")
	switch {
	case errors.Is(err, errLockedByAnother):
		return nil, fileContents{}, withAdvice(fmt.Errorf("-data %s: %w", path, err), "stop the other server, or give this one a file of its own")
	case err != nil:
		return nil, fileContents{}, withAdvice(fmt.Errorf("-data %s: %w", path, err), canWriteAdvice(folder))
	}
	os.Remove(path + ".tmp") // what a crash in the middle of a write may have left: never the data
	f := &dataFile{path: path, log: log, unlock: unlock, written: stampOf(path)}
	contents, err := f.read(f.written)
	if err != nil {
		unlock()
		return nil, fileContents{}, withAdvice(fmt.Errorf("-data %s: %w", path, err),
			"fix the file, or move it away to start with no users; the server changed nothing")
	}
	if err := f.write(contents.users, contents.lastID); err != nil {
		unlock()
		return nil, fileContents{}, withAdvice(fmt.Errorf("-data %s: %w", path, err), canWriteAdvice(folder))
	}
	return f, contents, nil
}

// canWriteAdvice is what to do about a data file the server cannot replace at each write.
func canWriteAdvice(folder string) string {
	return "give the server write access to the folder " + folder + "; in a container, mount that folder, not the file alone"
}

// followLinks returns path with its symbolic links followed, so that a write replaces the file a
// link names rather than the link. A path that names nothing yet is kept as it is.
func followLinks(path string) (string, error) {
	target, err := filepath.EvalSymlinks(path)
	if err == nil {
		return target, nil
	}
	if _, lstatErr := os.Lstat(path); errors.Is(err, fs.ErrNotExist) && lstatErr != nil {
		return path, nil // no file and no link: the file is created
	}
	return "", fmt.Errorf("-data %s: %w", path, err) // a link to nothing, say
}

// read returns what the file whose stamp is stamp holds: no users when there is no file. A file
// whose stamp changes while it is read is still being written, and is refused.
func (f *dataFile) read(stamp fileStamp) (fileContents, error) {
	if stamp.info == nil {
		return fileContents{}, nil
	}
	if !stamp.info.Mode().IsRegular() {
		return fileContents{}, errors.New("not a regular file")
	}
	data, err := os.ReadFile(f.path)
	switch {
	case err != nil:
		return fileContents{}, err
	case !stampOf(f.path).same(stamp):
		return fileContents{}, errors.New("the file changed while it was read")
	}
	return parseDataFile(data)
}

// parseDataFile decodes a data file strictly (no member the document does not have) and checks
// what the store needs: ids positive and unique, e-mails unique, next_id beyond every id. It does
// not judge the API's field rules again, so a file a person edited starts whatever they would say.
// A problem is named by its line and column where encoding/json says where it is.
func parseDataFile(data []byte) (fileContents, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // a byte-order mark, which some editors add
	if !utf8.Valid(data) {                          // encoding/json would quietly turn the bad bytes into U+FFFD, for good
		return fileContents{}, fmt.Errorf("%s: not valid UTF-8", position(data, int64(firstInvalidUTF8(data))))
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	var doc *fileDocument // nil for a file that holds only null
	err := decoder.Decode(&doc)
	var syntaxError *json.SyntaxError
	var typeError *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return fileContents{}, errors.New("the file is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fileContents{}, errors.New("the file ends before its JSON document does")
	case errors.As(err, &syntaxError): // Offset counts the bytes read, the bad one included
		return fileContents{}, fmt.Errorf("%s: %w", position(data, syntaxError.Offset-1), err)
	case errors.As(err, &typeError) && typeError.Field != "":
		return fileContents{}, fmt.Errorf("%s: %s must be %s", position(data, typeError.Offset), typeError.Field, jsonType(typeError.Type))
	case errors.As(err, &typeError), err == nil && doc == nil: // an array, a string, a number, or null
		return fileContents{}, errors.New("the file is not a JSON object")
	case err != nil: // encoding/json's "json: unknown field" has no type of its own
		return fileContents{}, fmt.Errorf("%w (the file holds next_id and users, each user id, name and email)", err)
	}
	if decoder.Decode(new(json.RawMessage)) != io.EOF { // as decodeJSON (body.go) ends a body
		return fileContents{}, errors.New("something follows the JSON document")
	}
	return checkDocument(*doc)
}

// checkDocument checks that ids are positive and unique, that no two users share their unique key
// (user.go), and that next_id is beyond every id and at most 2^63; it returns the users sorted by
// id, and the largest id ever given: next_id - 1, or without it the largest id.
func checkDocument(doc fileDocument) (fileContents, error) {
	byID := map[int64]bool{}
	byKey := map[string]user{}
	var largest int64
	for _, u := range doc.Users {
		if u.ID < 1 {
			return fileContents{}, fmt.Errorf("a user has the id %d (ids are whole numbers from 1: is an id missing?)", u.ID)
		}
		if byID[u.ID] {
			return fileContents{}, fmt.Errorf("two users have the id %d", u.ID)
		}
		if other, ok := byKey[u.uniqueKey()]; ok {
			return fileContents{}, fmt.Errorf("the users %d and %d clash: %w (compared in any case)", other.ID, u.ID, errEmailTaken)
		}
		byID[u.ID], byKey[u.uniqueKey()] = true, u
		largest = max(largest, u.ID)
	}
	lastID := largest
	if next := doc.NextID; next != nil {
		if *next <= uint64(largest) || *next > 1<<63 {
			return fileContents{}, fmt.Errorf("next_id is %d, not above every id (the largest is %d) and at most %d", *next, largest, uint64(1)<<63)
		}
		lastID = int64(*next - 1)
	}
	sortByID(doc.Users)
	return fileContents{users: doc.Users, lastID: lastID}, nil
}

// firstInvalidUTF8 returns the index of the first byte of data that is not valid UTF-8.
func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// position names the place of the byte at index i of data as an editor shows it: its line and
// column, both counted from 1, the column in characters.
func position(data []byte, i int64) string {
	before := data[:min(max(i, 0), int64(len(data)))]
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return fmt.Sprintf("line %d, column %d", bytes.Count(before, []byte("\n"))+1, utf8.RuneCount(before[lineStart:])+1)
}

// write replaces the file with the document of these users, in id order, and of the largest id
// ever given. A person's save since the server last wrote or loaded the file is never replaced:
// the write then stops before its rename and returns errFileEdited, so that the next write loads
// the save first. Only a save that lands within the rename itself can be replaced.
func (f *dataFile) write(users []user, lastID int64) error {
	if users == nil {
		users = []user{} // "users": [], never null
	}
	next := uint64(lastID) + 1
	document, err := json.MarshalIndent(fileDocument{NextID: &next, Users: users}, "", "  ")
	if err != nil {
		return err
	}
	var written fileStamp
	err = writeDurably(f.path, append(document, '\n'), func(temporary os.FileInfo) error {
		if !stampOf(f.path).same(f.written) {
			f.log.Warn("data file saved during a write", "file", f.path)
			return errFileEdited
		}
		written = fileStamp{temporary} // a rename keeps the file's time, size and identity
		return nil
	})
	if err == nil || errors.Is(err, errNotSynced) { // renamed: the file is the server's
		f.written = written
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// close lets go of the file, for another server to use.
func (f *dataFile) close() { f.unlock() }

// look stats the file (microseconds, with no read): saved is true when its stamp is not the one
// the server wrote or loaded last, which makes it a person's save (or removal).
func (f *dataFile) look() (save fileStamp, saved bool) {
	save = stampOf(f.path)
	return save, !save.same(f.written)
}

// remindRefusal logs why the save refused cannot be loaded: the first time, then at most once a
// minute while it stays.
func (f *dataFile) remindRefusal() {
	if time.Since(f.refused.logged) < time.Minute {
		return
	}
	f.refused.logged = time.Now()
	f.log.Warn("data file edit not loaded", "file", f.path, "reason", f.refused.reason)
}
