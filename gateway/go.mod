module github.com/vulnscan/vulnscan/gateway

go 1.26
