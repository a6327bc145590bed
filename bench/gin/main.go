// Command gin is the peer of bench/load.sh: the service's routes written the plain way with Gin, as
// its quick start runs it (gin.Default, so its Logger and Recovery middleware are on and the access
// log goes to stdout). A mutex-guarded map holds the users, a bearer token from BENCH_TOKEN guards
// /api, and c.JSON encodes every answer. It is a fair peer, neither a straw man nor tuned: what a
// Go team would write with the most used framework, measured beside the service and the floor. It
// lives in its own module (users-bench-gin) so the service's go.mod needs no require.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
)

type user struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

type userInput struct {
	Name  string `json:"name" binding:"required"`
	Email string `json:"email" binding:"required"`
}

type patchInput struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
}

type store struct {
	mu     sync.Mutex
	users  map[int]user
	lastID int
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "`address` to listen on; port 0 picks a free port")
	flag.Parse()
	token := os.Getenv("BENCH_TOKEN")
	if token == "" {
		fmt.Fprintln(os.Stderr, "gin: set BENCH_TOKEN to the bearer token to accept")
		os.Exit(2)
	}

	s := &store{users: map[int]user{}}
	r := gin.Default()
	api := r.Group("/api", requireToken(token))
	api.GET("/users", s.list)
	api.POST("/users", s.create)
	api.GET("/users/:id", s.get)
	api.PUT("/users/:id", s.replace)
	api.PATCH("/users/:id", s.patch)
	api.DELETE("/users/:id", s.remove)

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gin:", err)
		os.Exit(1)
	}
	fmt.Println("listening", listener.Addr()) // bench/load.sh reads the port from this line
	if err := r.RunListener(listener); err != nil {
		fmt.Fprintln(os.Stderr, "gin:", err)
		os.Exit(1)
	}
}

func requireToken(token string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.GetHeader("Authorization") != "Bearer "+token {
			c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "missing or invalid bearer token"})
			return
		}
		c.Next()
	}
}

func (s *store) list(c *gin.Context) {
	s.mu.Lock()
	users := make([]user, 0, len(s.users))
	for _, u := range s.users {
		users = append(users, u)
	}
	s.mu.Unlock()
	sort.Slice(users, func(i, j int) bool { return users[i].ID < users[j].ID })
	c.JSON(http.StatusOK, gin.H{"data": users, "total": len(users)})
}

func (s *store) create(c *gin.Context) {
	var in userInput
	if err := c.ShouldBindJSON(&in); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	s.mu.Lock()
	s.lastID++
	u := user{ID: s.lastID, Name: in.Name, Email: in.Email}
	s.users[u.ID] = u
	s.mu.Unlock()
	c.Header("Location", "/api/users/"+strconv.Itoa(u.ID))
	c.JSON(http.StatusCreated, u)
}

func (s *store) get(c *gin.Context) {
	id, ok := userID(c)
	if !ok {
		return
	}
	s.mu.Lock()
	u, found := s.users[id]
	s.mu.Unlock()
	if !found {
		c.JSON(http.StatusNotFound, gin.H{"error": "user not found"})
		return
	}
	c.JSON(http.StatusOK, u)
}

func (s *store) replace(c *gin.Context) {
	id, ok := userID(c)
	if !ok {
		return
	}
	var in userInput
	if err := c.ShouldBindJSON(&in); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	s.mu.Lock()
	_, found := s.users[id]
	u := user{ID: id, Name: in.Name, Email: in.Email}
	if found {
		s.users[id] = u
	}
	s.mu.Unlock()
	if !found {
		c.JSON(http.StatusNotFound, gin.H{"error": "user not found"})
		return
	}
	c.JSON(http.StatusOK, u)
}

func (s *store) patch(c *gin.Context) {
	id, ok := userID(c)
	if !ok {
		return
	}
	var in patchInput
	if err := c.ShouldBindJSON(&in); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	if (in.Name != nil && *in.Name == "") || (in.Email != nil && *in.Email == "") {
		c.JSON(http.StatusBadRequest, gin.H{"error": "name and email must not be empty"})
		return
	}
	s.mu.Lock()
	u, found := s.users[id]
	if found {
		if in.Name != nil {
			u.Name = *in.Name
		}
		if in.Email != nil {
			u.Email = *in.Email
		}
		s.users[id] = u
	}
	s.mu.Unlock()
	if !found {
		c.JSON(http.StatusNotFound, gin.H{"error": "user not found"})
		return
	}
	c.JSON(http.StatusOK, u)
}

func (s *store) remove(c *gin.Context) {
	id, ok := userID(c)
	if !ok {
		return
	}
	s.mu.Lock()
	_, found := s.users[id]
	delete(s.users, id)
	s.mu.Unlock()
	if !found {
		c.JSON(http.StatusNotFound, gin.H{"error": "user not found"})
		return
	}
	c.Status(http.StatusNoContent)
}

// userID reads the :id parameter; a path whose id is not a number names no user.
func userID(c *gin.Context) (int, bool) {
	id, err := strconv.Atoi(c.Param("id"))
	if err != nil {
		c.JSON(http.StatusNotFound, gin.H{"error": "user not found"})
		return 0, false
	}
	return id, true
}
