module github.com/acme/orders

go 1.22

require (
	github.com/gin-gonic/gin v1.9.1
	gorm.io/gorm v1.25.5
	gorm.io/driver/postgres v1.5.4
)
