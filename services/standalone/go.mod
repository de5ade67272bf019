module github.com/perpgate/perpgate/services/standalone

go 1.26

require github.com/perpgate/perpgate/pkg v0.0.0

replace github.com/perpgate/perpgate/pkg => ../../pkg
