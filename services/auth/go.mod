module github.com/vulnscan/vulnscan/services/auth

go 1.26
