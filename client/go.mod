module github.com/couponsvc/couponsvc/client

go 1.26.8
