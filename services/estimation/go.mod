module github.com/vulnscan/vulnscan/services/estimation

go 1.26
