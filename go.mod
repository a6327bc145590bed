module users

go 1.22
