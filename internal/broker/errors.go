package broker

import "errors"

var errExited = errors.New("broker process exited before it was ready")
