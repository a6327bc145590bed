package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unicode/utf8"
)

// With -data FILE the store keeps a copy of its users in one JSON document, which a person can
// read, and edit while the server is stopped (docs/durability.md):
//
//	{
//	  "next_id": 3,
//	  "users": [
//	    {"id": 1, "name": "Ada Lovelace", "email": "ada@example.com"}
//	  ]
//	}
//
// Each write replaces the whole file, durably, before memory changes (writeDurably, durable.go).

// A dataFile is the file -data names, held by this server alone while it runs.
type dataFile struct {
	path   string      // the file, its symbolic links followed: what a write replaces
	perm   fs.FileMode // the file's permission bits, kept across rewrites
	disk   disk
	unlock func() // lets go of the lock that keeps the file to one server
}

// fileDocument is the document in the file, as it is written.
type fileDocument struct {
	NextID uint64 `json:"next_id"` // the id the next create gets: 2^63 once every id has been given
	Users  []user `json:"users"`
}

// fileContents are what a data file holds, once checked: its users in id order, and the largest id
// ever given.
type fileContents struct {
	users  []user
	lastID int64
}

// openDataFile locks the file at path for this server and reads it, or creates it with no users
// when its folder has none. A file the store cannot trust is refused, with what to fix, and left as
// it is.
func openDataFile(path string, disk disk) (*dataFile, fileContents, error) {
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
	f := &dataFile{path: path, perm: 0o600, disk: disk, unlock: unlock}
	contents, err := f.read()
	if err != nil {
		unlock()
		return nil, fileContents{}, err
	}
	return f, contents, nil
}

// followLinks returns path with its symbolic links followed, so that a write replaces the file a
// link names rather than the link.
func followLinks(path string) (string, error) {
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return path, nil // not a link; a file that does not exist is created in read
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("-data %s is a symbolic link to a file that cannot be found: %w", path, err)
	}
	return target, nil
}

// read returns what the file holds, or creates it, durably, with no users.
func (f *dataFile) read() (fileContents, error) {
	os.Remove(f.temporary()) // what a crash in the middle of a write may have left: never the data
	info, err := os.Stat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileContents{}, f.write(nil, 0)
	case err != nil:
		return fileContents{}, fmt.Errorf("-data %s: %w", f.path, err)
	case info.IsDir():
		return fileContents{}, fmt.Errorf("-data %s is a folder: name a file in it, such as %s", f.path, filepath.Join(f.path, "users.json"))
	case isMountPoint(f.path, info):
		return fileContents{}, fmt.Errorf("-data %s is mounted on its own (a container's bind mount of the file alone, say): "+
			"each write replaces the file by a rename, which a mount point refuses; mount its folder instead", f.path)
	}
	f.perm = info.Mode().Perm()
	data, err := os.ReadFile(f.path)
	if err != nil {
		return fileContents{}, fmt.Errorf("-data %s: %w", f.path, err)
	}
	contents, err := parseDataFile(data)
	if err != nil {
		return fileContents{}, fmt.Errorf("-data %s: %w. The server did not start, and changed nothing: "+
			"fix the file, or move it away to start with no users", f.path, err)
	}
	return contents, nil
}

// parseDataFile checks a data file for what the store needs: one JSON object whose members are
// users (objects with exactly id, name and email) and, if it likes, next_id; ids and e-mails each
// unique. It does not judge the API's field rules again, so a file that an earlier version wrote,
// or a person edited, starts whatever later rules would say of it.
func parseDataFile(data []byte) (fileContents, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // a byte-order mark, which some editors add
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return fileContents{}, errors.New(`the file is empty: write {"users": []} in it, or delete it, to start with no users`)
	case bytes.HasPrefix(trimmed, []byte(`{"op":`)):
		return fileContents{}, errors.New("this is the journal of version 1 (JSON Lines), which version 2 no longer reads: " +
			"convert it with the jq command of the README's \"Upgrading from version 1\"")
	}
	if err := checkSyntax(data); err != nil {
		return fileContents{}, err
	}

	var users []user
	var nextID *uint64 // nil when the file leaves next_id out
	hasUsers := false
	d := json.NewDecoder(bytes.NewReader(data))
	err := readObject(d, "the file", func(name string) (err error) {
		switch name {
		case "users":
			hasUsers = true
			users, err = readUsers(d)
			return err
		case "next_id":
			nextID, err = readNextID(d)
			return err
		}
		return fmt.Errorf("the file has a member %q: it holds only users and next_id", name)
	})
	switch {
	case err != nil:
		return fileContents{}, err
	case !hasUsers:
		return fileContents{}, errors.New(`the file has no member "users": write "users": [] for none`)
	}
	return checkUsers(users, nextID)
}

// checkSyntax checks that data is one JSON value and nothing more, and says where it is not.
func checkSyntax(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	err := d.Decode(new(json.RawMessage))
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the file ends before its JSON document does")
	case errors.As(err, &syntax):
		line, column := lineAndColumn(data, syntax.Offset-1) // Offset counts the bytes read, the bad one too
		return fmt.Errorf("line %d, column %d: this is not valid JSON: %v", line, column, err)
	case err != nil:
		return err
	}
	if rest := bytes.TrimLeft(data[d.InputOffset():], " \t\r\n"); len(rest) > 0 {
		line, column := lineAndColumn(data, int64(len(data)-len(rest)))
		return fmt.Errorf("line %d, column %d: something follows the JSON document: remove it", line, column)
	}
	return nil
}

// readObject reads the JSON object at d's position, calling read for each member with its name as
// written, for read to decode its value: encoding/json alone would take "ID" for id, and let a
// member given twice quietly win.
func readObject(d *json.Decoder, what string, read func(name string) error) error {
	if token, err := d.Token(); err != nil || token != json.Delim('{') {
		return fmt.Errorf("%s must be a JSON object", what)
	}
	seen := map[string]bool{}
	for d.More() {
		token, err := d.Token()
		if err != nil {
			return err
		}
		name, _ := token.(string) // inside an object, every other token is a member's name
		if seen[name] {
			return fmt.Errorf("%s has the member %q twice", what, name)
		}
		seen[name] = true
		if err := read(name); err != nil {
			return err
		}
	}
	_, err := d.Token() // the closing brace
	return err
}

// readNextID reads next_id: the id the next create gets, from 1 to 2^63.
func readNextID(d *json.Decoder) (*uint64, error) {
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	next, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil || next == 0 || next > 1<<63 {
		return nil, fmt.Errorf("next_id must be a whole number from 1 to %d, not %s", uint64(1)<<63, raw)
	}
	return &next, nil
}

// readUsers reads the users array: each an object of exactly id, name and email.
func readUsers(d *json.Decoder) ([]user, error) {
	if token, err := d.Token(); err != nil || token != json.Delim('[') {
		return nil, errors.New(`"users" must be an array of users, such as [{"id": 1, "name": "Ann", "email": "ann@example.com"}]`)
	}
	var users []user
	for position := 1; d.More(); position++ {
		u, err := readUser(d, position)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	_, err := d.Token() // the closing bracket
	return users, err
}

// readUser reads the user at this position of the array, counted from 1.
func readUser(d *json.Decoder, position int) (user, error) {
	var u user
	what := fmt.Sprintf("user %d of the list", position)
	given := map[string]bool{}
	err := readObject(d, what, func(name string) error {
		given[name] = true
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return err
		}
		switch name {
		case "id":
			id, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil || id < 1 {
				return fmt.Errorf("%s: id must be a whole number from 1 to %d, not %s", what, int64(math.MaxInt64), raw)
			}
			u.ID = id
		case "name":
			if json.Unmarshal(raw, &u.Name) != nil {
				return fmt.Errorf("%s: name must be a string, not %s", what, raw)
			}
		case "email":
			if json.Unmarshal(raw, &u.Email) != nil {
				return fmt.Errorf("%s: email must be a string, not %s", what, raw)
			}
		default:
			return fmt.Errorf("%s has a member %q: a user has only id, name and email", what, name)
		}
		return nil
	})
	if err != nil {
		return user{}, err
	}
	for _, name := range []string{"id", "name", "email"} {
		if !given[name] {
			return user{}, fmt.Errorf("%s has no %s: a user has id, name and email", what, name)
		}
	}
	return u, nil
}

// checkUsers checks that ids and e-mails are unique and that next_id is beyond every id, and
// returns the users sorted by id.
func checkUsers(users []user, nextID *uint64) (fileContents, error) {
	byID := map[int64]int{}     // id to its position in the list, from 1
	byEmail := map[string]int{} // emailKey(email) to its position
	var lastID int64
	for i, u := range users {
		position := i + 1
		if other, ok := byID[u.ID]; ok {
			return fileContents{}, fmt.Errorf("users %d and %d of the list both have id %d: each user needs an id of its own", other, position, u.ID)
		}
		if other, ok := byEmail[emailKey(u.Email)]; ok {
			return fileContents{}, fmt.Errorf("users %d and %d of the list (ids %d and %d) have the same email %q: e-mails are unique, whatever their case",
				other, position, users[other-1].ID, u.ID, u.Email)
		}
		byID[u.ID], byEmail[emailKey(u.Email)] = position, position
		lastID = max(lastID, u.ID)
	}
	if nextID != nil {
		if *nextID <= uint64(lastID) {
			return fileContents{}, fmt.Errorf("next_id is %d, but it must be larger than every id, and user %d of the list has id %d: "+
				"raise next_id, or leave it out", *nextID, byID[lastID], lastID)
		}
		lastID = int64(*nextID - 1)
	}
	slices.SortFunc(users, func(a, b user) int { return cmp.Compare(a.ID, b.ID) })
	return fileContents{users: users, lastID: lastID}, nil
}

// lineAndColumn returns the line and the column of the byte at index i of data, both counted from
// 1, the column in characters: what an editor shows.
func lineAndColumn(data []byte, i int64) (line, column int) {
	before := data[:i]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[start:]) + 1
}

// write replaces the file with the document of these users, in id order, and of the largest id
// ever given.
func (f *dataFile) write(users []user, lastID int64) error {
	if users == nil {
		users = []user{} // "users": [], never null
	}
	var document bytes.Buffer
	encoder := json.NewEncoder(&document)
	encoder.SetEscapeHTML(false) // a name with & or < reads in the file as it was written
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(fileDocument{NextID: uint64(lastID) + 1, Users: users}); err != nil {
		return err
	}
	if err := writeDurably(f.disk, f.path, f.temporary(), document.Bytes(), f.perm); err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// temporary is the file a write goes to before it is renamed over the data file: beside it, since
// a rename is atomic only within one folder (and one file system).
func (f *dataFile) temporary() string { return f.path + ".tmp" }

// close lets go of the file, for another server to use.
func (f *dataFile) close() { f.unlock() }
