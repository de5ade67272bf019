module github.com/perpgate/perpgate/services/connectors/paper

go 1.26.0

require github.com/perpgate/perpgate/pkg v0.0.0

require github.com/shopspring/decimal v1.6.0 // indirect

replace github.com/perpgate/perpgate/pkg => ../../../pkg
