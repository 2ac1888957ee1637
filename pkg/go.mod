module github.com/vulnscan/vulnscan/pkg

go 1.26
