package pages

import (
	"errors"
	"fmt"
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/models"

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
	f := importForm{Errors: formErrors{}}
	fh, err := c.FormFile("file")
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			f.Errors.add("file", "This file is larger than 50 MiB.")
		} else {
			f.Errors.add("file", "Choose a CSV file.")
		}
		p.renderJobs(c, http.StatusBadRequest, &f)
		return
	}
	file, err := fh.Open()
	if err != nil {
		p.fail(c, err)
		return
	}
	defer file.Close()
	j, err := p.codes.StartImport(c.Request.Context(), web.Principal(c).Name, id, file)
	if err != nil {
		if models.ErrorCode(err) != models.CodeInvalidRequest || !f.Errors.fromError(err, map[string]string{"file": "file"}) {
			p.fail(c, err)
			return
		}
		p.renderJobs(c, http.StatusBadRequest, &f)
		return
	}
	p.flash(c, true, fmt.Sprintf("Importing %d rows: job %d is queued.", j.Total, j.ID))
	redirect(c, fmt.Sprintf("/admin/jobs/%d", j.ID))
}
