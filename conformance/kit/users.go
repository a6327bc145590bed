package kit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The rules of this reference only (users_*.go) see the collection as users: the service's own
// representation, {"id": 7, "name": "...", "email": "..."}, at /api/users, in the list envelope
// {"data": [...], "total": n}. Every helper here is theirs; the convention rules see items
// (items.go).

// usersCollection is where this reference keeps its users.
const usersCollection = "/api/users"

// maxBodyBytes is the largest body this reference takes: 1 MiB.
const maxBodyBytes = 1 << 20

// user is a user as the server answers it.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

func (u user) path() string { return usersCollection + "/" + strconv.FormatInt(u.ID, 10) }

func (u user) String() string { return string(mustMarshal(u)) }

// email returns a new address that carries the rule's tag, in the e-mail of every user it creates.
func (c *Client) email() string { return fmt.Sprintf("%s-%s@example.com", c.group, c.number()) }

// userJSON is a request body with these fields, in this order.
func userJSON(name, email string) string {
	return string(mustMarshal(struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	}{name, email}))
}

// newUser creates a user with a name and a new address. A server that cannot create one makes
// the rule a skip: create/201 and its neighbours say what is wrong.
func (c *Client) newUser(name string) (user, error) {
	return c.newUserWith(name, c.email())
}

// newUserWith creates a user with this name and address, which must carry the rule's tag.
func (c *Client) newUserWith(name, email string) (user, error) {
	x := c.write(http.MethodPost, usersCollection, userJSON(name, email))
	u, err := x.decodeUser()
	if x.status/100 != 2 || err != nil {
		return user{}, cannotCreate(x, usersCollection)
	}
	return u, nil
}

// newUsers creates one user for each name, in order, so their ids increase.
func (c *Client) newUsers(names ...string) ([]user, error) {
	var users []user
	for _, name := range names {
		u, err := c.newUser(name)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, nil
}

// goneUser makes a user of the rule's and deletes it, for a user that does not exist.
func (c *Client) goneUser() (user, error) {
	u, err := c.newUser("Kit Gone")
	if err != nil {
		return u, err
	}
	if x := c.remove(u.path()); x.status/100 != 2 {
		return u, cannotRun(x, "could not delete a user to check it: DELETE %s answered %s, not 204", u.path(), x.statusLine())
	}
	return u, nil
}

// findUser reads the user with this id as it is stored: by GET of the user, or where a server has
// no such route, from the whole list.
func (c *Client) findUser(id int64) (u user, found bool, err error) {
	x := c.get(user{ID: id}.path())
	switch x.status {
	case http.StatusOK:
		u, err := x.decodeUser()
		return u, err == nil, err
	case http.StatusNotFound:
		return user{}, false, nil
	}
	return c.findUserInList(func(u user) bool { return u.ID == id })
}

// findUserInList looks for a user in the whole list, as GET /api/users gives it.
func (c *Client) findUserInList(match func(user) bool) (user, bool, error) {
	x := c.get(usersCollection)
	list, err := x.decodeList()
	if err != nil {
		return user{}, false, err
	}
	for _, u := range list.Data {
		if match(u) {
			return u, true, nil
		}
	}
	return user{}, false, nil
}

// userUnchanged checks that a refused request x left the user as it was.
func (c *Client) userUnchanged(x *reply, before user) error {
	after, found, err := c.findUser(before.ID)
	switch {
	case err != nil:
		return err
	case !found:
		return failf(x, "the user left as it was, "+before.String(), "the user is gone after the request")
	case after != before:
		return failf(x, "the user left as it was, "+before.String(), "afterwards it is "+after.String())
	}
	return nil
}

// userNotCreated checks that a refused POST x made no user with this address.
func (c *Client) userNotCreated(x *reply, email string) error {
	return c.noUserLike(x, func(u user) bool { return strings.EqualFold(u.Email, email) })
}

// noUserLike checks that after a refused request x the whole list holds no user that matches.
func (c *Client) noUserLike(x *reply, match func(user) bool) error {
	u, found, err := c.findUserInList(match)
	if err != nil {
		return err
	}
	if found {
		return failf(x, "no user created", "the list holds "+u.String())
	}
	return nil
}

// userStored checks that the user reads back as want after the request x made it.
func (c *Client) userStored(x *reply, want user) error {
	got, found, err := c.findUser(want.ID)
	switch {
	case err != nil:
		return err
	case !found:
		return failf(x, "the user stored as "+want.String(), "no user "+strconv.FormatInt(want.ID, 10)+" afterwards")
	case got != want:
		return failf(x, "the user stored as "+want.String(), "it reads "+got.String())
	}
	return nil
}

// decodeUser reads the answer as a user: an object with an integer id, a name and an e-mail.
func (x *reply) decodeUser() (user, error) {
	var u struct {
		ID    json.RawMessage `json:"id"`
		Name  *string         `json:"name"`
		Email *string         `json:"email"`
	}
	if json.Unmarshal(x.responseBody, &u) != nil || u.Name == nil || u.Email == nil {
		return user{}, failf(x, `a user, {"id": <integer>, "name": "...", "email": "..."}`, x.summary())
	}
	id, err := strconv.ParseInt(string(u.ID), 10, 64) // a JSON number in integer form: "7" in quotes is a string
	if err != nil || id <= 0 {
		return user{}, failf(x, "a user whose id is a positive integer, such as 7", x.summary())
	}
	return user{ID: id, Name: *u.Name, Email: *u.Email}, nil
}

// isUser checks that the answer is this user.
func (x *reply) isUser(want user) error {
	got, err := x.decodeUser()
	if err != nil {
		return err
	}
	if got != want {
		return failf(x, "the user "+want.String(), x.summary())
	}
	return nil
}

// userList is the list envelope of this reference; the paging members are nil when absent.
type userList struct {
	Data       []user
	Total      int64
	Page       *int64
	PerPage    *int64
	TotalPages *int64
}

func (l userList) ids() []int64 {
	ids := []int64{}
	for _, u := range l.Data {
		ids = append(ids, u.ID)
	}
	return ids
}

// decodeList reads the answer as the list envelope: data, an array of users, and total, an integer.
func (x *reply) decodeList() (userList, error) {
	var raw struct {
		Data       []json.RawMessage `json:"data"`
		Total      *int64            `json:"total"`
		Page       *int64            `json:"page"`
		PerPage    *int64            `json:"per_page"`
		TotalPages *int64            `json:"total_pages"`
	}
	if err := x.statusIs(http.StatusOK); err != nil {
		return userList{}, err
	}
	if json.Unmarshal(x.responseBody, &raw) != nil || raw.Data == nil || raw.Total == nil {
		return userList{}, failf(x, `the list envelope, {"data": [<users>], "total": <integer>}`, x.summary())
	}
	l := userList{Total: *raw.Total, Page: raw.Page, PerPage: raw.PerPage, TotalPages: raw.TotalPages}
	for _, item := range raw.Data {
		u, err := (&reply{responseBody: item}).decodeUser()
		if err != nil {
			return userList{}, failf(x, "a list whose data are users", "data holding "+excerpt(item))
		}
		l.Data = append(l.Data, u)
	}
	return l, nil
}

// listIDs checks that the answer is a list of exactly these users, in this order.
func (x *reply) listIDs(want ...int64) error {
	l, err := x.decodeList()
	if err != nil {
		return err
	}
	if want == nil {
		want = []int64{}
	}
	if !slices.Equal(l.ids(), want) {
		return failf(x, "data holding the users "+l.describe(want)+", in that order", "the users "+l.describe(l.ids()))
	}
	return nil
}

// describe names users by id, each with the name and e-mail the list gives it, so that a failure
// of an order shows what was compared, not ids alone.
func (l userList) describe(ids []int64) string {
	parts := []string{}
	for _, id := range ids {
		part := strconv.FormatInt(id, 10)
		if i := slices.IndexFunc(l.Data, func(u user) bool { return u.ID == id }); i >= 0 {
			part += fmt.Sprintf(" (name %q, email %q)", l.Data[i].Name, l.Data[i].Email)
		}
		parts = append(parts, part)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// errorMessage is the message of an error body, or "" when there is none.
func (x *reply) errorMessage() string {
	var body struct{ Error string }
	json.Unmarshal(x.responseBody, &body)
	return body.Error
}

// fieldsAre checks the fields object of a 400: a non-empty string for each of names and no other
// member, or no fields at all when names is empty.
func (x *reply) fieldsAre(names ...string) error {
	var body struct {
		Fields map[string]json.RawMessage `json:"fields"`
	}
	json.Unmarshal(x.responseBody, &body)
	ok := len(body.Fields) == len(names)
	for _, name := range names {
		var problem string
		ok = ok && json.Unmarshal(body.Fields[name], &problem) == nil && problem != ""
	}
	if ok {
		return nil
	}
	if len(names) == 0 {
		return failf(x, "no fields member", x.summary())
	}
	return failf(x, "fields naming only "+strings.Join(names, " and ")+", each with its problem", x.summary())
}

// refused checks a request the field rules refuse: 400, with fields naming names. The error body
// itself is the errors rules' to check.
func (x *reply) refused(names ...string) error {
	return firstError(x.statusIs(http.StatusBadRequest), x.fieldsAre(names...))
}

// validBody is a valid create body with a new address.
func (c *Client) validBody() string { return userJSON("Kit Ann", c.email()) }

// postAs POSTs a valid body with this Content-Type.
func (c *Client) postAs(contentType string) *reply {
	return c.send(request{method: http.MethodPost, target: usersCollection, as: writer, body: c.validBody(),
		header: []string{"Content-Type", contentType}})
}

// padded is a JSON body followed by spaces, size bytes in all.
func padded(body string, size int) string { return body + strings.Repeat(" ", size-len(body)) }

// mentionsWord reports whether a message holds word with no letter, digit or _ on either side, so
// that name is not found within a longer word such as username.
func mentionsWord(message, word string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_])`).MatchString(message)
}

// memberNames returns the names of a JSON object's members, in the order they were sent.
func memberNames(body []byte) ([]string, error) {
	decoder := json.NewDecoder(bytes.NewReader(body))
	if token, err := decoder.Token(); err != nil || token != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var names []string
	for decoder.More() {
		name, err := decoder.Token()
		if err != nil {
			return nil, err
		}
		names = append(names, name.(string))
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			return nil, err
		}
	}
	if _, err := decoder.Token(); err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, errors.New("something after the object")
	}
	return names, nil
}

// errorBody checks this reference's error body: a JSON object whose error member is a non-empty
// string. Its wording is never checked.
func (x *reply) errorBody() error {
	var body map[string]json.RawMessage
	var message string
	if json.Unmarshal(x.responseBody, &body) != nil || json.Unmarshal(body["error"], &message) != nil || strings.TrimSpace(message) == "" {
		return failf(x, `the error body, {"error": "<a message>"}`, x.summary())
	}
	return nil
}
