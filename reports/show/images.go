package show

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures"
)

// RowImages are the pictures of the rows embedding rows: the images of
// the list file list (one path per row), or, when list is "", the rows
// of the data set's split (train or test, images of side size), whose
// rows must be the embeddings', in order. A dir:PATH data set lists its
// pictures in PATH/SPLIT_images.txt.
func RowImages(dataset, list, split string, size, rows int) (Images, error) {
	if list == "" && strings.HasPrefix(dataset, "dir:") {
		list = filepath.Join(strings.TrimPrefix(dataset, "dir:"), split+"_images.txt")
	}
	if list != "" {
		paths, err := ReadImageList(list)
		if err != nil {
			return nil, err
		}
		if len(paths) != rows {
			return nil, fmt.Errorf("%s lists %d images but the embeddings have %d rows", list, len(paths), rows)
		}
		return FileImages(paths)
	}
	d, err := fixtures.Load(dataset, fixtures.Options{Size: size})
	if err != nil {
		return nil, err
	}
	s, ok := d.Split(split)
	if !ok {
		return nil, fmt.Errorf("--split must be train or test (got %q)", split)
	}
	if s.X.Rows != rows {
		return nil, fmt.Errorf("--dataset %s --split %s has %d rows but the embeddings have %d: the rows must be the split's, in order", dataset, split, s.X.Rows, rows)
	}
	return PixelImages(s.X, d.Shape, dataset == "omniglot") // Omniglot stores ink as 1
}
