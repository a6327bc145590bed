package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

// A dataFile is the file -data names, held by this server alone while it runs. Only the store
// uses it, under the store's lock (store.go), which guards its stamp as it guards the users.
type dataFile struct {
	path   string    // the file, its symbolic links followed: what a write replaces
	unlock func()    // lets go of the lock that keeps the file to one server
	stamp  fileStamp // the file as the server left it at its last write or look: another is a person's edit
}

// A fileStamp is what the server notices of a file without reading it: when it was last modified,
// and its size. A file that cannot be looked at (it is gone) has the zero stamp.
type fileStamp struct {
	modified int64 // nanoseconds since 1970
	size     int64
}

// stampOf returns the stamp of the file at path.
func stampOf(path string) fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{modified: info.ModTime().UnixNano(), size: info.Size()}
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

// openDataFile locks the file at path for this server and reads it, or starts with no users when
// its folder has no such file. Then it writes the file once, as every write will, so that a file
// the server cannot replace stops the start rather than the first write. A file the store cannot
// trust is refused, with what to fix, and left as it is.
func openDataFile(path string) (*dataFile, fileContents, error) {
	path, err := followLinks(path)
	if err != nil {
		return nil, fileContents{}, err
	}
	folder := filepath.Dir(path)
	if info, err := os.Stat(folder); err != nil || !info.IsDir() {
		return nil, fileContents{}, fmt.Errorf("-data %s: there is no folder %s: create it, or name a file in another one", path, folder)
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, fileContents{}, err
	}
	f := &dataFile{path: path, unlock: unlock}
	contents, err := f.read()
	if err == nil {
		err = f.write(contents.users, contents.lastID)
		if err != nil {
			err = fmt.Errorf("-data %s: the server must replace this file at each write, and cannot: %w. "+
				"Give the server write access to the folder %s; in a container, mount that folder, not the file alone", path, err, folder)
		}
	}
	if err != nil {
		unlock()
		return nil, fileContents{}, err
	}
	return f, contents, nil
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

// read returns what the file holds: no users when there is no file yet.
func (f *dataFile) read() (fileContents, error) {
	os.Remove(f.temporary()) // what a crash in the middle of a write may have left: never the data
	data, err := os.ReadFile(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileContents{}, nil
	case err != nil:
		return fileContents{}, fmt.Errorf("-data %s: %w", f.path, err)
	}
	contents, err := parseDataFile(data)
	if err != nil {
		return fileContents{}, fmt.Errorf("-data %s: %w. The server did not start, and changed nothing: "+
			"fix the file, or move it away to start with no users", f.path, err)
	}
	return contents, nil
}

// parseDataFile decodes a data file strictly (no member the document does not have) and checks
// what the store needs: ids positive and unique, e-mails unique, next_id beyond every id. It does
// not judge the API's field rules again, so a file a person edited starts whatever they would say.
func parseDataFile(data []byte) (fileContents, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // a byte-order mark, which some editors add
	if !utf8.Valid(data) {                          // encoding/json would quietly turn the bad bytes into U+FFFD, for good
		return fileContents{}, fmt.Errorf("%s: the file is not valid UTF-8: save it as UTF-8", position(data, int64(firstInvalidUTF8(data))))
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	var doc *fileDocument // nil for a file that holds only null
	err := decoder.Decode(&doc)
	var syntaxError *json.SyntaxError
	var typeError *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return fileContents{}, errors.New(`the file is empty: write {"users": []} in it, or delete it, to start with no users`)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fileContents{}, errors.New("the file ends before its JSON document does")
	case errors.As(err, &syntaxError): // Offset counts the bytes read, the bad one included
		return fileContents{}, fmt.Errorf("%s: this is not valid JSON: %v", position(data, syntaxError.Offset-1), err)
	case errors.As(err, &typeError) && typeError.Field == "": // an array, a string, a number
		return fileContents{}, errNotAnObject
	case errors.As(err, &typeError):
		return fileContents{}, fmt.Errorf("%s: %s must be %s", position(data, typeError.Offset), typeError.Field, jsonType(typeError.Type))
	case err != nil: // encoding/json's "json: unknown field" has no type of its own
		return fileContents{}, fmt.Errorf("%v: the file holds next_id and users, and each user id, name and email", err)
	}
	if doc == nil { // the file holds null
		return fileContents{}, errNotAnObject
	}
	if decoder.Decode(new(json.RawMessage)) != io.EOF { // as decodeJSON (body.go) ends a body
		return fileContents{}, errors.New("something follows the JSON document: remove it")
	}
	return checkDocument(*doc)
}

// errNotAnObject is the problem of a file whose JSON is not an object.
var errNotAnObject = errors.New(`the file must hold one JSON object, such as {"next_id": 1, "users": []}`)

// checkDocument checks that ids are positive and unique, that no two users share their unique key
// (user.go), and that next_id is beyond every id and at most 2^63; it returns the users sorted by
// id, and the largest id ever given.
func checkDocument(doc fileDocument) (fileContents, error) {
	byID := map[int64]bool{}
	byKey := map[string]user{}
	var largest int64
	for _, u := range doc.Users {
		if u.ID < 1 {
			return fileContents{}, fmt.Errorf("a user has the id %d: ids are whole numbers from 1 (is its id missing?)", u.ID)
		}
		if byID[u.ID] {
			return fileContents{}, fmt.Errorf("two users have the id %d: each user needs an id of its own", u.ID)
		}
		if other, ok := byKey[u.uniqueKey()]; ok {
			return fileContents{}, fmt.Errorf("the users with ids %d and %d have the same email, %q: e-mails are unique, whatever their case",
				other.ID, u.ID, u.Email)
		}
		byID[u.ID], byKey[u.uniqueKey()] = true, u
		largest = max(largest, u.ID)
	}
	lastID := largest
	if next := doc.NextID; next != nil {
		if *next <= uint64(largest) || *next > 1<<63 {
			return fileContents{}, fmt.Errorf("next_id is %d, but it must be larger than every id (the largest is %d) and at most %d: "+
				"raise it, or leave it out", *next, largest, uint64(1)<<63)
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

// write replaces the file with the document of these users, given in id order, and of the largest
// id ever given.
func (f *dataFile) write(users []user, lastID int64) error {
	if users == nil {
		users = []user{} // "users": [], never null
	}
	next := uint64(lastID) + 1
	document, err := json.MarshalIndent(fileDocument{NextID: &next, Users: users}, "", "  ")
	if err != nil {
		return err
	}
	err = writeDurably(f.path, f.temporary(), append(document, '\n'))
	// Recorded after every write, failed ones too (a rename may have happened before a failed
	// folder sync), so that the server's own writes are never taken for a person's edit.
	f.stamp = stampOf(f.path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// readEdit reads the file as the start does when its stamp is not the one the server recorded: a
// person has edited it (or removed it). edited is false when the file is as the server left it.
// Each edit is read once: its stamp is recorded, whatever comes of it.
func (f *dataFile) readEdit() (contents fileContents, edited bool, err error) {
	stamp := stampOf(f.path)
	if stamp == f.stamp {
		return fileContents{}, false, nil
	}
	f.stamp = stamp
	data, err := os.ReadFile(f.path)
	if err != nil {
		return fileContents{}, true, err
	}
	contents, err = parseDataFile(data)
	return contents, true, err
}

// temporary is the file a write goes to before it is renamed over the data file: beside it, since
// a rename is atomic only within one folder (and one file system).
func (f *dataFile) temporary() string { return f.path + ".tmp" }

// close lets go of the file, for another server to use.
func (f *dataFile) close() { f.unlock() }
