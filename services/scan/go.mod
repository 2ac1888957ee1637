module github.com/vulnscan/vulnscan/services/scan

go 1.26
