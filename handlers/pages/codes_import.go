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
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	f := importForm{Token: postedOrNewToken(c), Errors: formErrors{}}
	handleForm(p, c, formPost[*multipart.FileHeader]{errs: f.Errors,
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
		act: func(fh *multipart.FileHeader) (outcome, error) {
			return p.createOnce(c, formToken(c), func() (outcome, error) {
				file, err := fh.Open()
				if err != nil {
					return outcome{}, err
				}
				defer file.Close()
				j, err := p.codes.StartImport(c.Request.Context(), web.Principal(c).Name, id, file)
				if err != nil {
					return outcome{}, err
				}
				return done(fmt.Sprintf("Importing %d rows: job %d is queued.", j.Total, j.ID), fmt.Sprintf("/admin/jobs/%d", j.ID)), nil
			})
		},
		refused: func(_ *multipart.FileHeader, err error) bool {
			return models.ErrorCode(err) == models.CodeInvalidRequest && f.Errors.fromError(err, map[string]string{"file": "file"})
		},
		status: func(error) int { return http.StatusBadRequest },
		show:   func(status int) { p.renderJobs(c, status, &f) },
	})
}
