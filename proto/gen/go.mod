module github.com/vulnscan/vulnscan/proto/gen

go 1.26
