module github.com/perpgate/perpgate/services/connectors/paper

go 1.26.0

require github.com/perpgate/perpgate/pkg v0.0.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/shopspring/decimal v1.6.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/perpgate/perpgate/pkg => ../../../pkg
