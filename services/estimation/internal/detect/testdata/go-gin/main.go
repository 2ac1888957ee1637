package main

import "github.com/gin-gonic/gin"

func main() {
	r := gin.Default()
	r.GET("/orders", list)
	_ = r.Run()
}
