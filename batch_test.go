package main

import (
	"errors"
	"fmt"
	"testing"
)

// The rules of batch.go: each change of a batch is judged against the published users and the
// batch's earlier writes.

func TestBatchJudgesEachWriteAgainstTheBatchsEarlierWrites(t *testing.T) {
	ann := user{1, "Ann", "ann@example.com"}
	annETag := entityTag(marshal(ann))
	bob := user{2, "Bob", "bob@example.com"}

	type step struct {
		change change
		want   error // nil when the write passes
		wantID int64 // the id the passing write has
	}
	tests := []struct {
		name       string
		steps      []step
		want       []user // the published users afterwards
		wantLastID int64  // the last id given afterwards
	}{
		{
			name: "two creates in one batch get consecutive new ids",
			steps: []step{
				{createChange("Carol", "carol@example.com"), nil, 4},
				{createChange("Dan", "dan@example.com"), nil, 5},
			},
			want:       []user{ann, bob, {4, "Carol", "carol@example.com"}, {5, "Dan", "dan@example.com"}},
			wantLastID: 5,
		},
		{
			name: "an e-mail created earlier in the batch is taken, whatever its case",
			steps: []step{
				{createChange("Carol", "carol@example.com"), nil, 4},
				{createChange("Carol 2", "CAROL@example.com"), errEmailTaken, 0},
			},
			want:       []user{ann, bob, {4, "Carol", "carol@example.com"}},
			wantLastID: 4,
		},
		{
			name: "a refused create uses up no id",
			steps: []step{
				{createChange("Ann 2", "Ann@Example.com"), errEmailTaken, 0},
				{createChange("Dan", "dan@example.com"), nil, 4},
			},
			want:       []user{ann, bob, {4, "Dan", "dan@example.com"}},
			wantLastID: 4,
		},
		{
			name: "an e-mail freed by a patch earlier in the batch can be taken",
			steps: []step{
				{patchEmail(1, "ann.new@example.com"), nil, 1},
				{createChange("Other Ann", "ann@example.com"), nil, 4},
			},
			want:       []user{{1, "Ann", "ann.new@example.com"}, bob, {4, "Other Ann", "ann@example.com"}},
			wantLastID: 4,
		},
		{
			name: "an e-mail freed by a delete earlier in the batch can be taken",
			steps: []step{
				{deleteChange(1), nil, 1},
				{createChange("Other Ann", "ANN@example.com"), nil, 4},
			},
			want:       []user{bob, {4, "Other Ann", "ANN@example.com"}},
			wantLastID: 4,
		},
		{
			name: "an e-mail taken by a patch earlier in the batch is refused to a later patch",
			steps: []step{
				{patchEmail(1, "new@example.com"), nil, 1},
				{replaceChange(2, "Bob", "NEW@example.com"), errEmailTaken, 0},
			},
			want:       []user{{1, "Ann", "new@example.com"}, bob},
			wantLastID: 3,
		},
		{
			name: "two users swap e-mails through a third address",
			steps: []step{
				{patchEmail(1, "swap@example.com"), nil, 1},
				{patchEmail(2, "ann@example.com"), nil, 2},
				{patchEmail(1, "bob@example.com"), nil, 1},
			},
			want:       []user{{1, "Ann", "bob@example.com"}, {2, "Bob", "ann@example.com"}},
			wantLastID: 3,
		},
		{
			name: "a user may change the case of its own e-mail",
			steps: []step{
				{patchEmail(1, "ANN@example.com"), nil, 1},
			},
			want:       []user{{1, "Ann", "ANN@example.com"}, bob},
			wantLastID: 3,
		},
		{
			name: "a user created earlier in the batch can be changed and deleted",
			steps: []step{
				{createChange("Carol", "carol@example.com"), nil, 4},
				{patchName(4, "Caroline"), nil, 4},
				{createChange("Dan", "dan@example.com"), nil, 5},
				{deleteChange(4), nil, 4},
			},
			want:       []user{ann, bob, {5, "Dan", "dan@example.com"}},
			wantLastID: 5,
		},
		{
			name: "a user deleted earlier in the batch is not found",
			steps: []step{
				{deleteChange(2), nil, 2},
				{patchName(2, "Bob again"), errUserNotFound, 0},
				{deleteChange(2), errUserNotFound, 0},
			},
			want:       []user{ann},
			wantLastID: 3,
		},
		{
			name: "ids that never were, or were deleted before, are not found",
			steps: []step{
				{replaceChange(99, "Nobody", "nobody@example.com"), errUserNotFound, 0},
				{deleteChange(3), errUserNotFound, 0},
			},
			want:       []user{ann, bob},
			wantLastID: 3,
		},
		{
			name: "deleted ids are never given again",
			steps: []step{
				{deleteChange(2), nil, 2},
				{createChange("Bob", "bob@example.com"), nil, 4},
			},
			want:       []user{ann, {4, "Bob", "bob@example.com"}},
			wantLastID: 4,
		},
		{
			name: "If-Match is judged against the batch's earlier write, not the published user",
			steps: []step{
				{withIfMatch(patchName(1, "Ann Lee"), annETag), nil, 1},
				{withIfMatch(patchName(1, "Ann Smith"), annETag), errIfMatchFailed, 0},
				{withIfMatch(patchName(1, "Ann Smith"), "*"), nil, 1},
			},
			want:       []user{{1, "Ann Smith", "ann@example.com"}, bob},
			wantLastID: 3,
		},
		{
			name: "a missing user is 404 before its If-Match is looked at",
			steps: []step{
				{withIfMatch(deleteChange(99), `"nope"`), errUserNotFound, 0},
			},
			want:       []user{ann, bob},
			wantLastID: 3,
		},
		{
			name: "412 comes before 409",
			steps: []step{
				{withIfMatch(patchEmail(2, "ann@example.com"), `"stale"`), errIfMatchFailed, 0},
			},
			want:       []user{ann, bob},
			wantLastID: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storeWithAnnAndBob(t)
			before := publishedUsers(s)
			b := s.newBatch()
			passed := 0
			for i, st := range tt.steps {
				u, err := b.judge(st.change)
				if !errors.Is(err, st.want) {
					t.Fatalf("step %d (%+v): error %v, want %v", i+1, st.change, err, st.want)
				}
				if err == nil {
					passed++
					if u.ID != st.wantID {
						t.Errorf("step %d: id %d, want %d", i+1, u.ID, st.wantID)
					}
				}
			}
			if len(b.writes) != passed {
				t.Errorf("the batch holds %d writes, want the %d that passed", len(b.writes), passed)
			}
			if got := publishedUsers(s); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("readers saw the batch before it was published: %v", got)
			}
			s.publish(b.writes)
			if got := publishedUsers(s); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("published users\n got %v\nwant %v", got, tt.want)
			}
			if last := s.lastGivenID(); last != tt.wantLastID {
				t.Errorf("the last id given is %d, want %d", last, tt.wantLastID)
			}
			checkStoreInvariants(t, s)
		})
	}
}
