package pages

import (
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// maxImportForm bounds the import form: the CSV file and the form's fields.
const maxImportForm = 51 << 20

// startImport queues a job importing the codes of the uploaded CSV file,
// then shows the job.
func (p *Pages) startImport(c *gin.Context) {
	f := importForm{Token: postedOrNewToken(c), Errors: formErrors{}}
	handleCreateOnTemplate(p, c, formPost[*multipart.FileHeader]{errs: f.Errors,
		read: func() *multipart.FileHeader {
			fh, err := c.FormFile("file")
			var tooLarge *http.MaxBytesError
			switch {
			case errors.As(err, &tooLarge):
				f.Errors.add("file", "This file is larger than 50 MiB.")
			case err != nil:
				f.Errors.add("file", "Choose a CSV file.")
			}
			return fh
		},
		refused: func(_ *multipart.FileHeader, err error) bool {
			return models.ErrorCode(err) == models.CodeInvalidRequest && f.Errors.fromError(err, map[string]string{"file": "file"})
		},
		status: func(error) int { return http.StatusBadRequest },
		show:   func(status int) { p.renderJobs(c, status, &f) },
	}, func(id int64, fh *multipart.FileHeader) (outcome, error) {
		file, err := fh.Open()
		if err != nil {
			return outcome{}, err
		}
		defer file.Close()
		j, err := p.codes.StartImport(c.Request.Context(), web.Principal(c).Name, id, file)
		if err != nil {
			return outcome{}, err
		}
		return jobQueued(j, fmt.Sprintf("Importing %d rows", j.Total)), nil
	})
}
