module users/e2e

go 1.22
