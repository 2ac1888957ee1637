package main

import "github.com/gin-gonic/gin"

func list(c *gin.Context) {
	c.JSON(200, nil)
}
