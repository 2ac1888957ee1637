module github.com/vulnscan/vulnscan/services/findings

go 1.26
